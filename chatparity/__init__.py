"""chatparity: check a chat-reply parser against llama.cpp, template by template and chunk by chunk."""
