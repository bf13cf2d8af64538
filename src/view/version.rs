//! `clinv version`: what this build is, for bug reports and compatibility checks.

use crate::console::Console;
use crate::error::{Result, exit};
use crate::view::format::TextFormat;
use serde::Serialize;

/// The `version -o json` document (`schemaVersion` 1).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Version {
    schema_version: u32,
    clinv: &'static str,
    /// `CLINV_GIT_COMMIT` at build time; `null` when it was not set.
    commit: Option<&'static str>,
    /// The apiVersion of the ClusterInventory clinv renders.
    lok8s_schema: &'static str,
    /// The Kubernetes API version of the CRD types (k8s-openapi).
    kubernetes_api: &'static str,
}

/// This build, as text or `-o json`.
///
/// # Errors
/// Stdout cannot be written.
pub fn say(console: &dyn Console, format: TextFormat) -> Result<i32> {
    let v = Version {
        schema_version: 1,
        clinv: env!("CARGO_PKG_VERSION"),
        commit: option_env!("CLINV_GIT_COMMIT").filter(|c| !c.is_empty()),
        lok8s_schema: crate::inventory::API_VERSION,
        kubernetes_api: crate::inventory::crd::kubernetes_api_version(),
    };
    let text = match format {
        TextFormat::Json => crate::inventory::render::to_json(&v)?,
        TextFormat::Text => format!(
            "clinv {}\ncommit:          {}\nlok8s schema:    {}\nkubernetes api:  {}\n",
            v.clinv,
            v.commit.unwrap_or("unknown"),
            v.lok8s_schema,
            v.kubernetes_api
        ),
    };
    console.data(&text)?;
    Ok(exit::OK)
}
