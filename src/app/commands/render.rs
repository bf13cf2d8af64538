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
    if let Some(domains) = super::fleet(&project, &args.domain)? {
        let Some(dir) = &args.out else {
            return Err(Failure::Usage(
                "clinv render: several domains need --out DIR (one folder each); stdout would mix their documents".into(),
            ));
        };
        return several(settings, &project, &domains, dir);
    }
    let domain = domain(settings, &project, args.domain.one())?;
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
    out_dir(dir)?;
    let crd_text = render::to_yaml(&crd::definition())?;
    let cr_text = render::to_yaml(&built.inventory)?;
    // Stage both before publishing either, so a failure leaves the old pair in place.
    let staged = stage_pair(dir, &crd_text, &cr_text)?;
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

/// `--out` must be a directory (or not exist yet).
fn out_dir(dir: &std::path::Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::from(Error::InvalidFile {
            path: dir.to_path_buf(),
            message: "--out must name a directory; this is a file".into(),
        }));
    }
    Ok(())
}

/// The CRD and the CR written to temporary siblings in `dir`, to commit together.
fn stage_pair(dir: &std::path::Path, crd_text: &str, cr_text: &str) -> Result<[files::Staged; 2]> {
    let stage = |name: &str, text: &str| {
        let path = dir.join(name);
        files::stage(&path, text.as_bytes(), 0o644).map_err(|e| Error::io(path, e))
    };
    Ok([stage(CRD_FILE, crd_text)?, stage(CR_FILE, cr_text)?])
}

/// Several domains into `DIR/<domain>/`: every domain rendered and validated first, each
/// failure named; only when all rendered are the files staged, then committed — nothing
/// is written when one fails. A deploy domain is named, and has no folder.
fn several(
    settings: &Settings,
    project: &crate::project::Project,
    domains: &[crate::domain::Domain],
    dir: &std::path::Path,
) -> Result<i32> {
    out_dir(dir)?;
    let at = rendered_at(settings)?;
    let (mut rendered, mut failed) = (Vec::new(), 0);
    for domain in domains {
        match render_one(settings, project, domain, at) {
            Ok(Some((warnings, text))) => {
                report_warnings(settings, &warnings)?;
                rendered.push((domain, text));
            }
            Ok(None) => {}
            Err(e) => {
                super::Left::failed(settings, domain, &e);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        settings.printer.error(&format!(
            "{failed} of {} domain(s) did not render; nothing written to {}",
            domains.len(),
            dir.display()
        ));
        return Ok(exit::FAILURE);
    }
    let crd_text = render::to_yaml(&crd::definition())?;
    let mut staged = Vec::new();
    for (domain, text) in &rendered {
        for (name, content) in [(CRD_FILE, crd_text.as_str()), (CR_FILE, text.as_str())] {
            let path = dir.join(domain.as_str()).join(name);
            let file = files::stage_deferred(&path, content.as_bytes(), 0o644);
            staged.push(file.map_err(|e| Error::io(path, e))?);
        }
    }
    files::commit_all(staged, dir).map_err(|e| Error::io(dir, e))?;
    for (domain, _) in &rendered {
        let d = dir.join(domain.as_str());
        settings.printer.info(&format!(
            "wrote {} and {}",
            d.join(CRD_FILE).display(),
            d.join(CR_FILE).display()
        ));
    }
    Ok(exit::OK)
}

/// One domain's inventory as YAML, validated, with its build warnings; `None` for a deploy
/// domain (named on stderr).
fn render_one(
    settings: &Settings,
    project: &crate::project::Project,
    domain: &crate::domain::Domain,
    at: jiff::Timestamp,
) -> crate::error::Result<Option<(Vec<crate::inventory::Warning>, String)>> {
    match inventory::load(project, domain, at)? {
        Loaded::Cluster(built) => {
            render::validate(&built.inventory)?;
            let text = render::to_yaml(&built.inventory)?;
            Ok(Some((built.warnings, text)))
        }
        Loaded::Deploy { cluster_ref, .. } => {
            super::Left::deploy(settings, domain, cluster_ref.as_deref());
            Ok(None)
        }
    }
}
