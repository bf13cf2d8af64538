//! The one table printer: each column as wide as its widest cell (in terminal columns, so
//! wide characters line up), two spaces between columns, no trailing blanks.
//!
//! Every cell is escaped, so a value from a file or the journal cannot move the cursor or
//! break a row.

use crate::util::redact::escape_controls;
use unicode_width::UnicodeWidthStr;

/// Rows of text cells under a header.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
    min: Vec<usize>,
    no_header: bool,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        let mut table = Table::default();
        table.row(header);
        table
    }

    /// Columns at least this wide (lok8s's `%-Ns` layouts).
    pub fn min_widths(mut self, widths: &[usize]) -> Table {
        self.min = widths.to_vec();
        self
    }

    /// Leaves the header row out (`--no-headers`); the widths then come from the data.
    pub fn no_header(mut self, no_header: bool) -> Table {
        self.no_header = no_header;
        self
    }

    pub fn row<S: AsRef<str>>(&mut self, cells: &[S]) {
        self.rows
            .push(cells.iter().map(|c| cell(c.as_ref())).collect());
    }

    /// The rows printed: all, or all but the header.
    fn shown(&self) -> &[Vec<String>] {
        &self.rows[usize::from(self.no_header).min(self.rows.len())..]
    }

    /// Each column's width: its widest cell, or its minimum.
    fn widths(&self) -> Vec<usize> {
        let rows = self.shown();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        (0..columns)
            .map(|i| {
                rows.iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.width())
                    .chain(self.min.get(i).copied())
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The table in at most `width` terminal columns (`None`: no limit, as in a pipe):
    /// when a line would be longer, the cells of column `elastic` (a free-text column:
    /// a detail, a source) are shortened with `…` — never below its header's width (a
    /// terminal too narrow for the other columns wraps); no other cell is cut.
    pub fn render_fit(&mut self, width: Option<usize>, elastic: usize) -> String {
        let widths = self.widths();
        let line = line_width(&widths);
        if let (Some(width), Some(&own)) = (width, widths.get(elastic))
            && line > width
        {
            let header = self.rows.first().and_then(|r| r.get(elastic));
            let floor = header.map_or(0, |h| h.width()).max(1).min(own);
            let room = own.saturating_sub(line - width).max(floor);
            for row in &mut self.rows {
                if let Some(cell) = row.get_mut(elastic) {
                    *cell = shorten(cell, room);
                }
            }
        }
        self.render()
    }

    /// Whether every line fits `width` (`None`: no limit, always).
    pub fn fits(&self, width: Option<usize>) -> bool {
        width.is_none_or(|w| line_width(&self.widths()) <= w)
    }

    /// The table in blocks of columns that each fit `width` (`None`: one block), every
    /// block repeating the first `keys` columns and the blocks apart by a blank line —
    /// `fleet`'s matrix wrapped, as a terminal cannot scroll sideways. No cell is ever
    /// cut: a column wider than the width on its own is a block of its own.
    pub fn render_blocks(&self, width: Option<usize>, keys: usize) -> String {
        let widths = self.widths();
        let Some(width) = width else {
            return self.render();
        };
        if line_width(&widths) <= width || widths.len() <= keys {
            return self.render();
        }
        let mut blocks: Vec<Vec<usize>> = Vec::new();
        let mut block: Vec<usize> = (0..keys).collect();
        for i in keys..widths.len() {
            let mut wider = block.clone();
            wider.push(i);
            let fits = line_width(&wider.iter().map(|&c| widths[c]).collect::<Vec<_>>()) <= width;
            if !fits && block.len() > keys {
                blocks.push(std::mem::replace(&mut block, (0..keys).collect()));
            }
            block.push(i);
        }
        blocks.push(block);
        let parts: Vec<String> = blocks.iter().map(|b| self.columns(b).render()).collect();
        parts.join("\n")
    }

    /// The table of only these columns (in this order).
    fn columns(&self, which: &[usize]) -> Table {
        Table {
            rows: self
                .rows
                .iter()
                .map(|r| {
                    which
                        .iter()
                        .map(|&c| r.get(c).cloned().unwrap_or_default())
                        .collect()
                })
                .collect(),
            min: which
                .iter()
                .map(|&c| self.min.get(c).copied().unwrap_or(0))
                .collect(),
            no_header: self.no_header,
        }
    }

    pub fn render(&self) -> String {
        let rows = self.shown();
        let widths = self.widths();
        let columns = widths.len();
        let row_len = widths.iter().sum::<usize>() + 2 * columns + 1;
        let mut out = String::with_capacity(rows.len().saturating_mul(row_len));
        let mut line = String::new();
        for row in rows {
            line.clear();
            for (i, text) in row.iter().enumerate() {
                line.push_str(text);
                if i + 1 < row.len() {
                    let pad = widths[i].saturating_sub(text.width()) + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A table written as it goes, from two passes over its rows: each row
/// [`Streamed::measure`]d, then each [`Streamed::write`]n — the bytes of
/// [`Table::render`] without holding the rows.
#[derive(Debug)]
pub struct Streamed {
    header: Vec<String>,
    widths: Vec<usize>,
    no_header: bool,
}

impl Streamed {
    pub fn new(header: &[&str], no_header: bool) -> Streamed {
        let header: Vec<String> = header.iter().map(|h| cell(h)).collect();
        let widths = match no_header {
            true => vec![0; header.len()],
            false => header.iter().map(|h| h.width()).collect(),
        };
        Streamed {
            header,
            widths,
            no_header,
        }
    }

    /// Widens the columns for a row (first pass).
    pub fn measure<S: AsRef<str>>(&mut self, cells: &[S]) {
        for (i, c) in cells.iter().enumerate() {
            let width = cell_text(c.as_ref()).width();
            match self.widths.get_mut(i) {
                Some(w) => *w = (*w).max(width),
                None => self.widths.push(width),
            }
        }
    }

    /// The header line, unless it is left out.
    ///
    /// # Errors
    /// Write errors.
    pub fn write_header(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self.no_header {
            true => Ok(()),
            false => self.write(&self.header, out),
        }
    }

    /// One row (second pass), padded to the widths measured.
    ///
    /// # Errors
    /// Write errors.
    pub fn write<S: AsRef<str>>(
        &self,
        cells: &[S],
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
            let text = cell_text(c.as_ref());
            line.push_str(&text);
            if i + 1 < cells.len() {
                let pad = self.widths[i].saturating_sub(text.width()) + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        let end = line.trim_end().len();
        line.truncate(end);
        line.push('\n');
        out.write_all(line.as_bytes())
    }
}

/// How wide a line of columns this wide is: two spaces between them.
fn line_width(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// `text` in at most `room` terminal columns: cut, with `…` as its last column.
fn shorten(text: &str, room: usize) -> String {
    if text.width() <= room {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// A cell on one line: control characters escaped, newline and tab included.
fn cell(text: &str) -> String {
    cell_text(text).into_owned()
}

/// [`cell`], borrowing `text` when it needs no escape.
pub fn cell_text(text: &str) -> std::borrow::Cow<'_, str> {
    // Printable ASCII first: a byte test, where most cells end (a listing has millions).
    if text.bytes().all(|b| (b' '..b'\x7f').contains(&b)) || !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        escape_controls(text)
            .replace('\n', "\\n")
            .replace('\t', "\\t"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_widest_cell() {
        let mut t = Table::new(&["NAME", "V", "NOTE"]);
        t.row(&["cilium", "1.20.1", ""]);
        t.row(&["x", "2", "unordered"]);
        assert_eq!(
            t.render(),
            "NAME    V       NOTE\ncilium  1.20.1\nx       2       unordered\n"
        );
    }

    #[test]
    fn minimum_widths_and_wide_characters() {
        let mut t = Table::new(&["A", "B"]).min_widths(&[4]);
        t.row(&["日本", "x"]);
        t.row(&["äö", "y"]);
        assert_eq!(t.render(), "A     B\n日本  x\näö    y\n");
    }

    /// Two passes write what the whole table renders: wide characters, controls,
    /// empty and short rows, with and without the header.
    #[test]
    fn the_streamed_table_is_the_table() {
        let rows: [&[&str]; 4] = [
            &["cilium", "1.20.1", ""],
            &["日本", "x\u{1b}[31m", "tab\there"],
            &["", "", "unordered  "],
            &["a-long-first-cell", "2"],
        ];
        for no_header in [false, true] {
            let mut table = Table::new(&["NAME", "V", "NOTE"]).no_header(no_header);
            let mut streamed = Streamed::new(&["NAME", "V", "NOTE"], no_header);
            for row in rows {
                table.row(row);
                streamed.measure(row);
            }
            let mut out = Vec::new();
            streamed.write_header(&mut out).unwrap();
            for row in rows {
                streamed.write(row, &mut out).unwrap();
            }
            assert_eq!(
                String::from_utf8(out).unwrap(),
                table.render(),
                "{no_header}"
            );
        }
    }

    #[test]
    fn without_the_header_widths_come_from_the_data() {
        let mut t = Table::new(&["LONG-HEADER", "B"]).no_header(true);
        t.row(&["a", "b"]);
        assert_eq!(t.render(), "a  b\n");
    }

    /// The matrix wrapped: every block within the width, repeating the key column, and
    /// every cell whole in exactly one block; a column wider than the width alone.
    #[test]
    fn blocks_fit_the_width_and_repeat_the_keys() {
        let mut t = Table::new(&["ADDON", "a-domain", "b-domain", "c-domain"]);
        t.row(&["cilium", "1.19.2", "1.20.1", "-"]);
        t.row(&["cert-manager", "v1.18.0", "-", "v1.20.1"]);
        assert_eq!(t.render_blocks(None, 1), t.render());
        assert_eq!(t.render_blocks(Some(200), 1), t.render());
        let wrapped = t.render_blocks(Some(34), 1);
        assert_eq!(
            wrapped,
            "ADDON         a-domain  b-domain\ncilium        1.19.2    1.20.1\ncert-manager  v1.18.0   -\n\n\
ADDON         c-domain\ncilium        -\ncert-manager  v1.20.1\n"
        );
        // Narrower than the key and one column: a column a block, never cut.
        let narrow = t.render_blocks(Some(5), 1);
        assert_eq!(narrow.matches("ADDON").count(), 3, "{narrow}");
        assert!(narrow.contains("cert-manager  v1.18.0\n"), "{narrow}");
    }

    /// The free-text column gives way (cut with `…`), never below its floor; the others
    /// are whole; wide characters count by their width.
    #[test]
    fn a_fitted_table_cuts_only_its_elastic_column() {
        let make = || {
            let mut t = Table::new(&["DOMAIN", "RESULT", "DETAIL"]);
            t.row(&[
                "lab",
                "applied",
                "snapshot 20261205-0001 applied through context offline",
            ]);
            t.row(&["prod", "failed", "日本日本日本日本日本日本日本日本"]);
            t
        };
        let whole = make().render();
        assert_eq!(make().render_fit(None, 2), whole);
        assert_eq!(make().render_fit(Some(500), 2), whole);
        let fitted = make().render_fit(Some(40), 2);
        for line in fitted.lines() {
            assert!(line.width() <= 40, "{line:?}");
        }
        assert!(
            fitted.contains("lab     applied  snapshot 20261205-0001…\n"),
            "{fitted}"
        );
        assert!(
            fitted.contains("prod    failed   日本日本日本日本日本日…\n"),
            "{fitted}"
        );
        // Never below its header: a very narrow terminal wraps, as it must.
        let floor = make().render_fit(Some(10), 2);
        assert!(floor.contains("lab     applied  snaps…\n"), "{floor}");
    }

    #[test]
    fn cells_are_escaped() {
        let mut t = Table::new(&["A", "B"]);
        t.row(&["a\u{1b}[2J\nb", "c\td"]);
        assert_eq!(t.render(), "A              B\na\\u{1b}[2J\\nb  c\\td\n");
    }
}
