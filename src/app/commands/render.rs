//! `clinv render`: the inventory on stdout, or the CR and CRD as files.

use super::{domain, project, rendered_at, report_warnings};
use crate::app::cli::{DocFormat, RenderArgs};
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::error::{Error, exit};
use crate::inventory::render::{self, Format};
use crate::inventory::{self, Loaded};
use crate::{inventory::crd, util::files};

/// File names inside `--out DIR` (and in a GitOps folder).
pub const CRD_FILE: &str = "clusterinventory.crd.yaml";
pub const CR_FILE: &str = "clusterinventory.yaml";

pub fn run(settings: &Settings, args: &RenderArgs) -> Result<i32> {
    let format = args.output.unwrap_or_default();
    if args.out.is_some() && format == DocFormat::Json {
        return Err(Failure::Usage(
            "clinv render: --out writes YAML files; drop -o json".into(),
        ));
    }
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let built = match inventory::load(&project, &domain, rendered_at(settings)?)? {
        Loaded::Cluster(built) => built,
        // An error, not a note and exit 0: `clinv render | kubectl apply -f -` must not
        // pass on an empty document as if the render had succeeded.
        Loaded::Deploy { cluster_ref, .. } => {
            return Err(Error::from(crate::error::DomainError::DeployOnly {
                domain: domain.to_string(),
                cluster_ref,
            })
            .into());
        }
    };
    // An inventory the API server would refuse is the error to show, not its warnings.
    render::validate(&built.inventory)?;
    report_warnings(settings, &built.warnings)?;
    let Some(dir) = &args.out else {
        let format = if format == DocFormat::Json {
            Format::Json
        } else {
            Format::Yaml
        };
        settings
            .printer
            .data(&render::encode(&built.inventory, format)?)?;
        return Ok(exit::OK);
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::from(Error::InvalidFile {
            path: dir.clone(),
            message: "--out must name a directory; this is a file".into(),
        }));
    }
    let crd_text = render::to_yaml(&crd::definition())?;
    let cr_text = render::to_yaml(&built.inventory)?;
    // Stage both before publishing either, so a failure leaves the old pair in place.
    let stage = |name: &str, text: &str| {
        let path = dir.join(name);
        files::stage(&path, text.as_bytes(), 0o644).map_err(|e| Error::io(path, e))
    };
    let staged = [stage(CRD_FILE, &crd_text)?, stage(CR_FILE, &cr_text)?];
    for s in staged {
        s.commit().map_err(|e| Error::io(dir, e))?;
    }
    settings.printer.info(&format!(
        "wrote {} and {}",
        dir.join(CRD_FILE).display(),
        dir.join(CR_FILE).display()
    ));
    Ok(exit::OK)
}
