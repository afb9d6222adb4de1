"""Sessions (template × mode × conversation) and the replies read under them."""
