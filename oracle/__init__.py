"""The llama.cpp oracle: its pinned source, its build, and the client of its child process."""
