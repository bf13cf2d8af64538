//! A fleet selection applied to a matrix that was read whole (`fleet --domain 'air-*'`
//! from the project, the store or a repository): the selected domains' columns only.

use super::Matrix;
use crate::domain::Domain;
use std::collections::{BTreeMap, BTreeSet};

impl Matrix {
    /// Every domain the matrix knows of, in name order: its columns and the domains it
    /// leaves out (a deploy domain, a spec that does not parse) — so a selection can name
    /// those too, and see them said.
    pub fn known(&self) -> Vec<Domain> {
        let names = self
            .domains
            .iter()
            .chain(self.left.iter().map(|l| &l.domain));
        let mut known: Vec<Domain> = names.filter_map(|d| Domain::parse(d).ok()).collect();
        known.sort();
        known.dedup();
        known
    }

    /// Only the columns (and left-out domains) of `keep`; an addon no kept domain has is
    /// no row.
    #[must_use]
    pub fn only(mut self, keep: &[Domain]) -> Matrix {
        let keep: BTreeSet<&str> = keep.iter().map(Domain::as_str).collect();
        let mut column = BTreeMap::new();
        let mut domains = Vec::new();
        for (old, name) in self.domains.iter().enumerate() {
            if keep.contains(name.as_str()) {
                column.insert(old, domains.len());
                domains.push(name.clone());
            }
        }
        self.domains = domains;
        for row in &mut self.rows {
            row.cells = std::mem::take(&mut row.cells)
                .into_iter()
                .filter_map(|(old, cell)| column.get(&old).map(|new| (*new, cell)))
                .collect();
        }
        self.rows.retain(|row| !row.cells.is_empty());
        self.left.retain(|l| keep.contains(l.domain.as_str()));
        self.delivered.retain(|d, _| keep.contains(d.as_str()));
        if let Some(changed) = &mut self.changed {
            changed.added_domains.retain(|d| keep.contains(d.as_str()));
            changed
                .removed
                .retain(|(_, d, _)| keep.contains(d.as_str()));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Left, Matrix, Source};
    use crate::domain::Domain;

    fn matrix() -> Matrix {
        let rows = [
            (
                "cert-manager",
                vec![(0, Some("1.14.4")), (2, Some("1.15.0"))],
            ),
            ("only-fsn", vec![(2, Some("0.1.0"))]),
        ];
        let mut m = super::super::fixture(Source::Store, &["air-1", "air-2", "fsn-1"], &rows);
        m.left = vec![Left {
            domain: "air-9".into(),
            why: "deploy domain".into(),
            failed: false,
            other_domain: false,
            deploy: Some(None),
        }];
        m
    }

    #[test]
    fn only_keeps_the_selected_columns_and_drops_rows_left_empty() {
        let m = matrix();
        let known: Vec<String> = m.known().iter().map(ToString::to_string).collect();
        assert_eq!(known, ["air-1", "air-2", "air-9", "fsn-1"]);
        let keep: Vec<Domain> = ["air-2", "fsn-1"]
            .iter()
            .map(|d| Domain::parse(d).unwrap())
            .collect();
        let m = m.only(&keep);
        assert_eq!(m.domains, ["air-2", "fsn-1"]);
        assert_eq!(m.rows.len(), 2);
        assert_eq!(m.rows[0].cells.keys().copied().collect::<Vec<_>>(), [1]);
        assert_eq!(m.rows[0].cells[&1].version.as_deref(), Some("1.15.0"));
        assert!(m.left.is_empty());
        let air1: Vec<Domain> = vec![Domain::parse("air-1").unwrap()];
        let m = matrix().only(&air1);
        assert_eq!(m.rows.len(), 1, "only-fsn has no cell in air-1");
    }
}
