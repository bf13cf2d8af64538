//! The closing table of a command over several domains (`replay -A`, `publish -A`,
//! `commit -A`): what happened to each domain, as a table or the rows of `-o json|yaml`.

/// One domain's row: what happened, and the detail (a snapshot, a server, a commit).
#[derive(Debug, serde::Serialize)]
pub struct Row {
    pub domain: String,
    pub result: String,
    pub detail: String,
}

impl Row {
    pub fn new(domain: &str, result: impl Into<String>, detail: impl Into<String>) -> Row {
        Row {
            domain: domain.to_string(),
            result: result.into(),
            detail: detail.into(),
        }
    }
}

/// DOMAIN, RESULT, DETAIL: the detail cut with `…` to fit `style.width` unless wide.
pub fn table(rows: &[Row], style: crate::view::TableStyle) -> String {
    fitted(
        ["DOMAIN", "RESULT", "DETAIL"],
        rows.iter()
            .map(|r| [r.domain.as_str(), r.result.as_str(), r.detail.as_str()]),
        style,
    )
}

/// A table of a word per domain and a detail (`drift -A`'s verdicts too): the last
/// column is the free text that gives way to fit the width (`-o wide`: whole).
pub fn fitted<'a>(
    header: [&str; 3],
    rows: impl Iterator<Item = [&'a str; 3]>,
    style: crate::view::TableStyle,
) -> String {
    let mut table = crate::view::table::Table::new(&header).no_header(style.no_headers);
    for row in rows {
        table.row(&row);
    }
    let width = style.width.filter(|_| !style.wide);
    table.render_fit(width, 2)
}
