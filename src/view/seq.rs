//! A JSON or YAML list written element by element.
//!
//! The bytes the whole document would
//! have (`render::to_json` of the list, or its YAML), without ever holding it — so a
//! listing of any length prints in the memory of one element.

use crate::console::Console;
use crate::error::{Error, Result};
use std::io::Write;

/// Writes a list to the console's data as `fill` hands its elements to the [`Seq`].
///
/// # Errors
/// What `fill` returns, an element that does not serialise, or a write error.
pub fn write(
    console: &dyn Console,
    format: SeqFormat,
    fill: impl FnOnce(&mut Seq<'_>) -> Result<()>,
) -> Result<()> {
    console.data_with(|out| {
        let mut seq = Seq {
            out,
            format,
            count: 0,
        };
        fill(&mut seq)?;
        seq.end()
    })
}

/// The document format of [`write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqFormat {
    Json,
    Yaml,
}

/// A list being written by [`write`]: one element at a time.
pub struct Seq<'a> {
    out: &'a mut dyn Write,
    format: SeqFormat,
    count: usize,
}

impl Seq<'_> {
    /// Writes the next element. JSON: its pretty form indented one level (every newline
    /// of pretty JSON is structural: a newline inside a string is `\n`), after `[` or
    /// `,`; YAML: the one-element block sequence of it (a top-level block sequence is its
    /// elements' sequences, one after another).
    ///
    /// # Errors
    /// The element does not serialise, or stdout cannot be written.
    pub fn item<T: serde::Serialize>(&mut self, item: &T) -> Result<()> {
        let text = match self.format {
            SeqFormat::Json => {
                let one = crate::inventory::render::to_json(item)?;
                let mut text = String::with_capacity(one.len() + 64);
                text.push_str(if self.count == 0 { "[\n" } else { ",\n" });
                for (i, line) in one.trim_end_matches('\n').lines().enumerate() {
                    if i > 0 {
                        text.push('\n');
                    }
                    text.push_str("  ");
                    text.push_str(line);
                }
                text
            }
            SeqFormat::Yaml => {
                let value = serde_json::to_value(item).map_err(|e| Error::encode("YAML", e))?;
                crate::yaml::emit::to_string(&serde_json::Value::Array(vec![value]))
            }
        };
        self.count += 1;
        self.out.write_all(text.as_bytes()).map_err(Error::stdout)
    }

    fn end(self) -> Result<()> {
        let text = match (self.format, self.count) {
            (SeqFormat::Json, 0) => "[]\n".to_string(),
            (SeqFormat::Json, _) => "\n]\n".to_string(),
            (SeqFormat::Yaml, 0) => crate::yaml::emit::to_string(&serde_json::Value::Array(vec![])),
            (SeqFormat::Yaml, _) => String::new(),
        };
        self.out.write_all(text.as_bytes()).map_err(Error::stdout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`Seq`] writes for `items`.
    fn streamed(format: SeqFormat, items: &[serde_json::Value]) -> String {
        let mut out = Vec::new();
        let mut seq = Seq {
            out: &mut out,
            format,
            count: 0,
        };
        for item in items {
            seq.item(item).unwrap();
        }
        seq.end().unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A streamed list is byte for byte the whole document: empty, one element, several,
    /// nested values, strings with newlines, U+2028 and YAML's special characters.
    #[test]
    fn a_streamed_list_is_the_whole_document() {
        let lists = [
            serde_json::json!([]),
            serde_json::json!([{"a": 1}]),
            serde_json::json!([
                {"id": "a", "nested": {"list": [1, 2, {"x": null}], "empty": {}, "none": []}},
                {"text": "line\nnext \u{2028} - item: #no", "n": -1.5, "t": true},
                "plain",
                [1, [2, 3]],
                {"key: colon": "'quoted'", "multi": "a\nb\n"}
            ]),
        ];
        for list in lists {
            let items = list.as_array().unwrap();
            assert_eq!(
                streamed(SeqFormat::Json, items),
                crate::inventory::render::to_json(&list).unwrap()
            );
            assert_eq!(
                streamed(SeqFormat::Yaml, items),
                crate::yaml::emit::to_string(&list)
            );
        }
    }
}
