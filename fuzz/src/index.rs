//! The addon index (`addons-index.json`, from a file, a download or the cache): parsed,
//! compared with a real inventory as `clinv updates` and the agent do, and re-encoded.

use clinv::{catalog::index, catalog::updates, inventory::parse};
use std::sync::LazyLock;

static CURRENT: LazyLock<Vec<updates::Current>> = LazyLock::new(|| {
    let text = include_str!("../../tests/golden/prod.acme.example.json");
    let inventory = parse::inventory_from_text(text).expect("the golden inventory parses");
    updates::from_inventory(&inventory)
});

/// One input.
pub fn run(data: &[u8]) {
    let Ok(index) = index::parse(data, "fuzz.json") else {
        return;
    };
    let _ = updates::compute(&CURRENT, &index);
    let _ = index::encode(&index);
    // An index's own entries as the inventory: every name matches itself.
    let current: Vec<updates::Current> = index
        .addons
        .iter()
        .map(|a| updates::Current {
            name: a.name.clone(),
            version: a.app_version.clone(),
        })
        .collect();
    let _ = updates::compute(&current, &index);
}
