//! `clinv commit`: write a snapshot into a GitOps repository (Flux / Argo CD) and commit
//! it with git2; optionally push.

use super::{domain, project, rendered_at, report_warnings, store};
use crate::app::cli::CommitArgs;
use crate::app::settings::Settings;
use crate::error::{Error, Result, exit};
use crate::gitops::{self, Committed, Folder, Repo};
use crate::inventory::{self, ClusterInventory, Loaded};
use crate::store::{DomainStore, SnapshotRecord, State, StateRecord, now_millis};
use crate::{inventory::crd, inventory::render};
use serde_json::Value;
use std::time::Duration;

/// The default message: a stable subject, a body, and the trailers.
const DEFAULT_TEMPLATE: &str = "inventory({domain}): {summary}\n\nRendered at {renderedAt} (Kubernetes {kubernetesVersion}) and committed by clinv.\n";

pub fn run(settings: &Settings, args: &CommitArgs) -> Result<i32> {
    let project = project(settings)?;
    let domain = domain(settings, &project, args.domain.domain.as_deref())?;
    let path = args
        .path
        .clone()
        .unwrap_or_else(|| gitops::default_path(&domain));
    gitops::check_path(&path)?;
    if args.print_flux || args.print_argo {
        let repo = Repo::open(&args.repo, Duration::from_secs(30))?;
        let branch = repo.branch(args.branch.as_deref())?;
        let text = if args.print_flux {
            flux(&domain, &path)
        } else {
            argo(
                &domain,
                &path,
                &branch,
                repo.remote_url(args.push.as_deref().unwrap_or("origin")),
            )
        };
        settings.printer.data(&text)?;
        return Ok(exit::OK);
    }
    let store = store(settings, &project).domain(&domain);
    let (snap, inventory) = match snapshot(
        settings,
        &project,
        &store,
        &domain,
        args.snapshot.as_deref(),
    )? {
        Some(found) => found,
        None => return Ok(exit::OK),
    };
    let folder = Folder {
        crd: crd_yaml(&store, &snap)?,
        cr: cr_yaml(&inventory)?,
        kustomization: gitops::kustomization(),
    };
    let repo = Repo::open(&args.repo, Duration::from_secs(30))?;
    let template = args
        .message
        .clone()
        .unwrap_or_else(|| DEFAULT_TEMPLATE.to_string());
    let message = |summary: &str| message(&template, summary, &domain, &snap, &inventory);
    let request = gitops::Request {
        path: &path,
        branch: args.branch.as_deref(),
        author: args.author.as_deref(),
        message: &message,
        sign: args.sign,
        inventory: &inventory,
    };
    let branch = repo.branch(args.branch.as_deref())?;
    let committed = repo.commit(&folder, &request)?;
    let commit_id = match &committed {
        Committed::Older { branch_rendered_at } => {
            settings.printer.warn(&format!(
                "{branch} already holds a newer inventory of {domain} (renderedAt {branch_rendered_at}); snapshot {} (renderedAt {}) is not committed",
                snap.id, snap.rendered_at
            ));
            return Ok(exit::OK);
        }
        Committed::UpToDate => {
            settings.printer.info(&format!(
                "{path}: up to date on {branch} (snapshot {} matches apart from renderedAt)",
                snap.id
            ));
            None
        }
        Committed::New { oid, summary } => {
            settings.printer.info(&format!(
                "committed {} on {branch}: inventory({domain}): {summary}",
                &oid[..12]
            ));
            Some(oid.clone())
        }
    };
    let mut detail = commit_id
        .is_none()
        .then(|| "checked: the branch already holds it".to_string());
    if let Some(remote) = &args.push {
        let pushed = repo.push(
            remote,
            &folder,
            &request,
            Duration::from_secs_f64(args.push_timeout),
        )?;
        let tip = repo.head_commit(&branch).unwrap_or_default();
        settings.printer.info(&format!(
            "pushed {branch} to {remote} ({}; {} attempt(s))",
            &tip[..tip.len().min(12)],
            pushed.attempts
        ));
        if commit_id.is_some() {
            detail = Some(format!("pushed to {remote}"));
        }
        record(settings, &store, &snap, Some(tip), detail);
    } else {
        record(
            settings,
            &store,
            &snap,
            commit_id.or_else(|| repo.head_commit(&branch)),
            detail,
        );
    }
    Ok(exit::OK)
}

/// The snapshot to commit: `--snapshot`, else the newest, else a fresh render recorded now.
fn snapshot(
    settings: &Settings,
    project: &crate::project::Project,
    store: &DomainStore,
    domain: &str,
    reference: Option<&str>,
) -> Result<Option<(SnapshotRecord, ClusterInventory)>> {
    let journal = store.read()?;
    for d in &journal.damage {
        settings
            .printer
            .warn(&format!("snapshot store: {d} — skipped"));
    }
    if let Some(r) = reference.or_else(|| journal.newest_first().next().map(|_| "latest")) {
        let snap = crate::store::resolve(&journal, &crate::store::parse_ref(r)?)?
            .record
            .clone();
        let inventory = store.inventory(&snap)?;
        return Ok(Some((snap, inventory)));
    }
    let built = match inventory::load(project, domain, rendered_at(settings)?)? {
        Loaded::Cluster(b) => *b,
        Loaded::Deploy { cluster_ref, .. } => {
            super::deploy_domain_note(settings, domain, cluster_ref.as_deref());
            return Ok(None);
        }
    };
    report_warnings(settings, &built.warnings)?;
    render::validate(&built.inventory)?;
    let crd_json = serde_json::to_string(&crd::definition()).unwrap_or_default();
    let snap = store.record(&built.inventory, &crd_json, None)?;
    settings.printer.info(&format!(
        "recorded snapshot {} (the store had none for {domain})",
        snap.id
    ));
    Ok(Some((snap, built.inventory)))
}

fn record(
    settings: &Settings,
    store: &DomainStore,
    snap: &SnapshotRecord,
    commit: Option<String>,
    detail: Option<String>,
) {
    let change = StateRecord {
        detail,
        commit,
        ..StateRecord::new(&snap.id, &now_millis(), State::Committed)
    };
    if let Err(e) = store.set_states(&[change]) {
        settings.printer.warn(&format!(
            "snapshot {}: committed, but the store could not record it: {e}",
            snap.id
        ));
    }
}

/// The CRD as committed: the snapshot's CRD plus Argo CD's sync wave, so a first sync
/// creates the kind before the object.
fn crd_yaml(store: &DomainStore, snap: &SnapshotRecord) -> Result<String> {
    let mut crd: Value = serde_json::from_str(&store.crd(snap)?)
        .map_err(|e| Error::Message(format!("snapshot {}: CRD object: {e}", snap.id)))?;
    annotate(&mut crd, "argocd.argoproj.io/sync-wave", "-1");
    render::to_yaml(&crd)
}

/// The CR as committed: lok8s's object plus Argo CD's option to skip the dry run of a
/// kind that does not exist yet.
fn cr_yaml(inventory: &ClusterInventory) -> Result<String> {
    let mut cr = serde_json::to_value(inventory).map_err(|e| Error::Message(e.to_string()))?;
    annotate(
        &mut cr,
        "argocd.argoproj.io/sync-options",
        "SkipDryRunOnMissingResource=true",
    );
    render::to_yaml(&cr)
}

fn annotate(object: &mut Value, key: &str, value: &str) {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = meta
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(map) = annotations.as_object_mut() {
            map.insert(key.into(), value.into());
        }
    }
}

/// Fills the template and makes sure the three trailers end the message.
fn message(
    template: &str,
    summary: &str,
    domain: &str,
    snap: &SnapshotRecord,
    inventory: &ClusterInventory,
) -> String {
    let k8s = inventory
        .spec
        .kubernetes_version
        .as_deref()
        .unwrap_or("unknown");
    let mut text = template
        .replace("{domain}", domain)
        .replace("{summary}", summary)
        .replace("{specHash}", &snap.spec_hash)
        .replace("{lok8sVersion}", &snap.lok8s_version)
        .replace("{snapshot}", &snap.id)
        .replace("{renderedAt}", &snap.rendered_at)
        .replace("{kubernetesVersion}", k8s);
    let trailers = [
        ("Spec-Hash", &snap.spec_hash),
        ("Lok8s-Version", &snap.lok8s_version),
        ("Snapshot", &snap.id),
    ];
    let missing: Vec<String> = trailers
        .iter()
        .filter(|(k, _)| !text.lines().any(|l| l.starts_with(&format!("{k}: "))))
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    if !missing.is_empty() {
        text = format!("{}\n\n{}\n", text.trim_end(), missing.join("\n"));
    }
    text
}

fn flux(domain: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: clusterinventory-{domain}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./{path}\n  prune: true\n  wait: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
}

fn argo(domain: &str, path: &str, branch: &str, url: Option<String>) -> String {
    let url = url.unwrap_or_else(|| "<your repository URL>".into());
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: clusterinventory-{domain}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {url}\n    targetRevision: {branch}\n    path: {path}\n  destination:\n    server: https://kubernetes.default.svc\n  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n    syncOptions:\n      - ServerSideApply=true\n"
    )
}
