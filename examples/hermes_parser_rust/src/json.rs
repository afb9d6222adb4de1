//! A small JSON reader and writer, standard library only: what protocol lines and a call's arguments need.

/// A JSON value; a number keeps its text, so an id or a reader goes back exactly as it came.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The value of `key` in an object (the last one, as JSON.parse keeps it), else None.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(fields) => fields.iter().rev().find(|(name, _)| name == key).map(|(_, value)| value),
            _ => None,
        }
    }

    /// The text of a string value, else None.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    /// The items of an array, else None.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Parse one JSON text (whitespace allowed around the value), as strictly as JSON.parse.
pub fn parse(text: &str) -> Result<Json, String> {
    let mut reader = Reader { text, at: 0 };
    reader.space();
    let value = reader.value()?;
    reader.space();
    if reader.at < text.len() {
        return Err(reader.error("text after the value"));
    }
    Ok(value)
}

/// A cursor over the text being parsed.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    /// The byte at the cursor, if any.
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// An error naming the cursor's offset.
    fn error(&self, what: &str) -> String {
        format!("bad JSON at byte {}: {what}", self.at)
    }

    /// Skip JSON whitespace (space, tab, newline, carriage return).
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consume `word` at the cursor or fail.
    fn expect(&mut self, word: &str) -> Result<(), String> {
        if !self.text[self.at..].starts_with(word) {
            return Err(self.error(&format!("expected {word}")));
        }
        self.at += word.len();
        Ok(())
    }

    /// One value at the cursor.
    fn value(&mut self) -> Result<Json, String> {
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Json::String),
            Some(b't') => self.expect("true").map(|_| Json::Bool(true)),
            Some(b'f') => self.expect("false").map(|_| Json::Bool(false)),
            Some(b'n') => self.expect("null").map(|_| Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    /// An object: `{`, then `"key": value` pairs separated by commas, then `}`.
    fn object(&mut self) -> Result<Json, String> {
        let mut fields = Vec::new();
        self.expect("{")?;
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Json::Object(fields));
        }
        loop {
            self.space();
            let key = self.string()?;
            self.space();
            self.expect(":")?;
            self.space();
            fields.push((key, self.value()?));
            self.space();
            if self.peek() == Some(b'}') {
                self.at += 1;
                return Ok(Json::Object(fields));
            }
            self.expect(",")?;
        }
    }

    /// An array: `[`, then values separated by commas, then `]`.
    fn array(&mut self) -> Result<Json, String> {
        let mut items = Vec::new();
        self.expect("[")?;
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.space();
            items.push(self.value()?);
            self.space();
            if self.peek() == Some(b']') {
                self.at += 1;
                return Ok(Json::Array(items));
            }
            self.expect(",")?;
        }
    }

    /// A number as JSON writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<Json, String> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Ok(Json::Number(self.text[start..self.at].to_string()))
    }

    /// Skip the digits at the cursor.
    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    /// Skip one digit or more, or fail.
    fn some_digits(&mut self) -> Result<(), String> {
        let start = self.at;
        self.digits();
        if self.at == start {
            return Err(self.error("expected a digit"));
        }
        Ok(())
    }

    /// A string, escapes resolved (a lone surrogate escape, which JSON.parse accepts, reads as U+FFFD).
    fn string(&mut self) -> Result<String, String> {
        self.expect("\"")?;
        let mut text = String::new();
        loop {
            let rest = &self.text[self.at..];
            let plain = rest.find(|c: char| c == '"' || c == '\\' || c < ' ').unwrap_or(rest.len());
            text.push_str(&rest[..plain]);
            self.at += plain;
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(text);
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut text)?;
                }
                Some(_) => return Err(self.error("a control character in a string")),
                None => return Err(self.error("an unfinished string")),
            }
        }
    }

    /// The escape after a backslash, appended to `text`.
    fn escape(&mut self, text: &mut String) -> Result<(), String> {
        let simple = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.at += 1;
                let unit = self.hex4()?;
                text.push(self.code_point(unit)?);
                return Ok(());
            }
            _ => return Err(self.error("a bad escape")),
        };
        self.at += 1;
        text.push(simple);
        Ok(())
    }

    /// The code point a `\uXXXX` unit starts: a high surrogate takes the low one escaped after it.
    fn code_point(&mut self, unit: u32) -> Result<char, String> {
        if (0xd800..0xdc00).contains(&unit) && self.text[self.at..].starts_with("\\u") {
            let save = self.at;
            self.at += 2;
            let low = self.hex4()?;
            if (0xdc00..0xe000).contains(&low) {
                return Ok(
                    char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)).unwrap_or('\u{fffd}')
                );
            }
            self.at = save;
        }
        Ok(char::from_u32(unit).unwrap_or('\u{fffd}'))
    }

    /// Four hex digits at the cursor.
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.text.get(self.at..self.at + 4).filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        let value = digits
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error("a bad \\u escape"))?;
        self.at += 4;
        Ok(value)
    }
}

/// The JSON text of a value, on one line.
pub fn write(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Json::Number(text) => out.push_str(text),
        Json::String(text) => write_string(text, out),
        Json::Array(items) => {
            out.push('[');
            for (n, item) in items.iter().enumerate() {
                out.push_str(if n > 0 { "," } else { "" });
                write(item, out);
            }
            out.push(']');
        }
        Json::Object(fields) => {
            out.push('{');
            for (n, (key, item)) in fields.iter().enumerate() {
                out.push_str(if n > 0 { "," } else { "" });
                write_string(key, out);
                out.push(':');
                write(item, out);
            }
            out.push('}');
        }
    }
}

/// A string's JSON text: quotes, backslashes and control characters escaped, the rest as it is.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::{parse, write, Json};

    /// The JSON text `write` gives a value.
    fn written(value: &Json) -> String {
        let mut out = String::new();
        write(value, &mut out);
        out
    }

    #[test]
    fn accepts_what_json_parse_accepts() {
        for text in [
            "0",
            "-0",
            "1.5e-3",
            "2E+10",
            " \t\n\r{\"a\": [1, {\"b\": null}], \"c\": true} ",
            "[[[]]]",
            "\"\"",
        ] {
            assert!(parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn refuses_what_json_parse_refuses() {
        for text in [
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "tru",
            "\"a\u{1}\"",
            "\"\\x\"",
            "[1] 2",
            "",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn reads_escapes_and_surrogate_pairs() {
        let read = parse(r#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x""#).unwrap();
        assert_eq!(read, Json::String("\"\\/\u{8}\u{c}\n\r\té😀\u{fffd}x".into()));
    }

    #[test]
    fn keeps_numbers_as_written_and_the_last_of_a_repeated_key() {
        let read = parse(r#"{"id": 12, "id": 7.50, "x": [-0.0]}"#).unwrap();
        assert_eq!(read.get("id"), Some(&Json::Number("7.50".into())));
        assert_eq!(written(&read), r#"{"id":12,"id":7.50,"x":[-0.0]}"#);
    }

    #[test]
    fn writes_strings_as_json_stringify_does() {
        let text = Json::String("a\"b\\c\n\u{1}\u{1f}é😀\u{2028}".into());
        assert_eq!(written(&text), "\"a\\\"b\\\\c\\n\\u0001\\u001fé😀\u{2028}\"");
        assert_eq!(parse(&written(&text)).unwrap(), text);
    }
}
