//! `clinv render`: a domain's inventory built now, validated, its warnings said; the CR
//! and the CRD written as files — one folder, or one per domain, all or nothing.

use super::context::Context;
use crate::domain::Domain;
use crate::error::{DomainError, Error, Result, exit};
use crate::inventory::render;
use crate::inventory::{self, ClusterInventory, Loaded, Warning, crd};
use crate::project::Project;
use crate::util::files;
use std::path::Path;

/// File names inside `--out DIR` (and in a GitOps folder).
pub const CRD_FILE: &str = "clusterinventory.crd.yaml";
pub const CR_FILE: &str = "clusterinventory.yaml";

/// One domain's inventory, rendered at the run's `SOURCE_DATE_EPOCH` (or now), validated, its build
/// warnings said (an error under `--strict`).
///
/// # Errors
/// A deploy domain ([`DomainError::DeployOnly`]), a project that does not build, an
/// inventory the API server would refuse, a strict warning.
pub fn one(project: &Project, domain: &Domain, cx: Context<'_>) -> Result<ClusterInventory> {
    let built = match inventory::load(project, domain, cx.rendered_at()?)? {
        Loaded::Cluster(built) => built,
        // An error, not a note and exit 0: `clinv render | kubectl apply -f -` must not
        // pass on an empty document as if the render had succeeded.
        Loaded::Deploy { cluster_ref, .. } => {
            return Err(Error::from(DomainError::DeployOnly {
                domain: domain.to_string(),
                cluster_ref,
            }));
        }
    };
    // An inventory the API server would refuse is the error to show, not its warnings.
    render::validate(&built.inventory)?;
    cx.warnings(&built.warnings)?;
    Ok(built.inventory)
}

/// The CRD and `inventory` as files in `dir`, both staged before either is published
/// (a failure leaves the old pair in place); says what it wrote.
///
/// # Errors
/// `dir` is a file, or a write failed.
pub fn write(dir: &Path, inventory: &ClusterInventory, cx: Context<'_>) -> Result<()> {
    out_dir(dir)?;
    let crd_text = render::to_yaml(&crd::definition())?;
    let cr_text = render::to_yaml(inventory)?;
    let staged = stage_pair(dir, &crd_text, &cr_text)?;
    for s in staged {
        s.commit().map_err(|e| Error::io(dir, e))?;
    }
    say_wrote(cx, dir);
    Ok(())
}

/// `--out` must be a directory (or not exist yet).
fn out_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::InvalidFile {
            path: dir.to_path_buf(),
            message: "--out must name a directory; this is a file".into(),
        });
    }
    Ok(())
}

/// The CRD and the CR written to temporary siblings in `dir`, to commit together.
fn stage_pair(dir: &Path, crd_text: &str, cr_text: &str) -> Result<[files::Staged; 2]> {
    let stage = |name: &str, text: &str| {
        let path = dir.join(name);
        files::stage(&path, text.as_bytes(), 0o644).map_err(|e| Error::io(path, e))
    };
    Ok([stage(CRD_FILE, crd_text)?, stage(CR_FILE, cr_text)?])
}

fn say_wrote(cx: Context<'_>, dir: &Path) {
    cx.console.info(&format!(
        "wrote {} and {}",
        dir.join(CRD_FILE).display(),
        dir.join(CR_FILE).display()
    ));
}

/// Several domains into `DIR/<domain>/`, all or nothing.
///
/// Every domain is rendered and validated first, each failure named; only when all
/// rendered are the files staged, then committed — nothing is written when one fails
/// (exit 1). A deploy domain is named, and has no folder.
///
/// # Errors
/// `dir` is a file, a bad `SOURCE_DATE_EPOCH` or a warning under `--strict`, a write.
pub fn several(project: &Project, domains: &[Domain], dir: &Path, cx: Context<'_>) -> Result<i32> {
    out_dir(dir)?;
    let at = cx.rendered_at()?;
    let (mut rendered, mut failed) = (Vec::new(), 0);
    for domain in domains {
        match render_one(project, domain, at, cx) {
            Ok(Some((warnings, text))) => {
                cx.warnings(&warnings)?;
                rendered.push((domain, text));
            }
            Ok(None) => {}
            Err(e) => {
                cx.console.error(&format!("{domain}: {e}"));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        cx.console.error(&format!(
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
        say_wrote(cx, &dir.join(domain.as_str()));
    }
    Ok(exit::OK)
}

/// One domain's inventory as YAML, validated, with its build warnings; `None` for a deploy
/// domain (noted for the end of the run).
fn render_one(
    project: &Project,
    domain: &Domain,
    at: jiff::Timestamp,
    cx: Context<'_>,
) -> Result<Option<(Vec<Warning>, String)>> {
    match inventory::load(project, domain, at)? {
        Loaded::Cluster(built) => {
            render::validate(&built.inventory)?;
            let text = render::to_yaml(&built.inventory)?;
            Ok(Some((built.warnings, text)))
        }
        Loaded::Deploy { cluster_ref, .. } => {
            cx.deploy(domain.as_str(), cluster_ref.as_deref());
            Ok(None)
        }
    }
}
