//! An inventory read back from text — a rendered CR or a `kubectl get` dump (YAML, JSON,
//! a `List`, a multi-document stream) — as `clinv diff`, `drift`, `history` and
//! `updates --from` read it, plus `diff --ignore` paths.
//!
//! The input is `TEXT` or `TEXT NUL IGNORE-PATHS` (one path per line). A parsed
//! inventory is diffed both ways against a real one (examples/acme's prod, rendered) and
//! the report rendered in every format.

use clinv::history::diff::{self, Ignore};
use clinv::{catalog::updates, inventory::parse, view::report};
use std::sync::LazyLock;

static GOLDEN: LazyLock<clinv::inventory::ClusterInventory> = LazyLock::new(|| {
    parse::inventory_from_text(include_str!("../../tests/golden/prod.acme.example.json"))
        .expect("the golden inventory parses")
});

/// One input.
pub fn run(data: &[u8]) {
    let (text, ignore) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return; // the readers refuse non-UTF-8 before parsing
    };
    let paths: Vec<String> = String::from_utf8_lossy(ignore)
        .lines()
        .map(str::to_string)
        .collect();
    // The paths `--ignore` accepts, one at a time; the rest would stop the command.
    let valid: Vec<String> = paths
        .into_iter()
        .filter(|p| Ignore::parse(std::slice::from_ref(p)).is_ok())
        .collect();
    let ignore = Ignore::parse(&valid).unwrap_or_default();

    let Ok(inventory) = parse::inventory_from_text(text) else {
        return;
    };
    // `updates --from` reads through the same reader: the addons it compares.
    let _ = updates::from_inventory(&inventory);
    for (a, b) in [(&*GOLDEN, &inventory), (&inventory, &*GOLDEN)] {
        let r = diff::diff_with(a, b, &ignore);
        let _ = report::text::diff(&r, true);
        let _ = report::markdown::diff(&r);
        let _ = report::json::diff(&r);
        let _ = report::unified::diff(&r, a, b, false);
    }
    let same = diff::diff_with(&inventory, &inventory, &ignore);
    assert!(!same.has_changes, "an inventory differs from itself");
    let _ = diff::initial(&inventory, &ignore);
}
