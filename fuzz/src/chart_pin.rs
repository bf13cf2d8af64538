//! A chart pin, `.lok8s/addons/<name>/chart.yaml`: `version` and `appVersion` as the
//! inventory, the index and the `addons` view read them (one reader), and the khelm check. Versions
//! then go through the version ordering `updates` and `diff` use.

use clinv::history::version;
use clinv::project::addons;

/// One input.
pub fn run(data: &[u8]) {
    if let Some(v) = addons::pin_field(data, "version") {
        let _ = version::parse(&v);
        let _ = version::compare(&v, "1.20.1");
        let _ = version::compare("v1.0.0-rc.1", &v);
    }
    let _ = addons::pin_field(data, "appVersion");
    let _ = addons::is_khelm(data);
}
