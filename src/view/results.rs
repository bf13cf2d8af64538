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

/// DOMAIN, RESULT, DETAIL.
pub fn table(rows: &[Row]) -> String {
    let mut table = crate::view::table::Table::new(&["DOMAIN", "RESULT", "DETAIL"]);
    for r in rows {
        table.row(&[&r.domain, &r.result, &r.detail]);
    }
    table.render()
}
