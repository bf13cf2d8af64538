//! The HTML audit report (placeholder, filled in below).
use crate::audit::Trail;
use crate::inventory::ClusterInventory;

pub fn html_report(domain: &str, trail: &Trail, current: &ClusterInventory) -> String {
    let _ = (domain, trail, current);
    String::new()
}
