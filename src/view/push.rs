//! `clinv push oci://…`: what a push did, said (`-o text|json` on stdout), and the
//! Flux/Argo objects that sync the artifact with the advice that goes with them.

use crate::domain::Domain;
use crate::error::{Result, exit};
use crate::gitops::layout;
use crate::oci::{self, Reference};
use crate::ops::context::Context;
use crate::ops::push as ops;
use crate::view::format::PushFormat;
use std::path::Path;

/// One domain's push ([`ops::run`]): its messages, then what it did.
///
/// # Errors
/// The push's error, an owed push under `--strict` (or not recorded), a write to stdout.
pub fn say(
    cx: Context<'_>,
    domain: &Domain,
    report: ops::Report,
    format: PushFormat,
) -> Result<i32> {
    cx.delivered(domain.as_str(), report, |push| pushed(cx, *push, format))
}

fn pushed(cx: Context<'_>, push: ops::Push, format: PushFormat) -> Result<i32> {
    let (Some(pushed), None) = (&push.pushed, &push.owed) else {
        return match push.owed {
            Some(owing) => cx.owed_push(owing),
            None => Ok(exit::OK),
        };
    };
    let r = &push.reference;
    let repository = format!("{}/{}", r.registry, r.repository);
    let url = format!("{repository}:{}@{}", r.tag, push.digest);
    let what = if pushed.uploaded == 0 && pushed.tagged.is_empty() {
        "already there: nothing uploaded".to_string()
    } else if pushed.tagged.is_empty() {
        format!("{} blob(s) uploaded; tags already current", pushed.uploaded)
    } else {
        format!(
            "{} blob(s) uploaded; tagged {}",
            pushed.uploaded,
            pushed.tagged.join(", ")
        )
    };
    let signed = match pushed.signed {
        Some(oci::Signed::Added) => "; signed",
        Some(oci::Signed::Present) => "; signature already there",
        None => "",
    };
    cx.console.info(&format!(
        "pushed snapshot {} of {} to oci://{repository} as {} and {} ({what}{signed})",
        push.snapshot.id, push.snapshot.domain, r.tag, push.snapshot_tag
    ));
    let text = match format {
        PushFormat::Text => format!("oci://{url}\n"),
        PushFormat::Json => {
            let doc = serde_json::json!({
                "repository": repository,
                "tag": r.tag,
                "digest": push.digest,
                "url": url,
            });
            crate::inventory::render::to_json(&doc)?
        }
    };
    cx.console.data(&text)?;
    if let Some(e) = &push.not_recorded {
        cx.console.warn(&format!(
            "snapshot {}: pushed, but the store could not record it: {}",
            push.snapshot.id,
            crate::error::chain(e)
        ));
    }
    Ok(exit::OK)
}

/// What `--print-flux` / `--print-argo` print with.
pub struct Manifest<'a> {
    /// Flux's OCIRepository and Kustomization; else Argo CD's Application.
    pub flux: bool,
    /// How the registry is reached (credentials, CA, plain HTTP).
    pub access: &'a oci::Access,
    /// `--sign KEY`: the objects verify the signature.
    pub sign: Option<&'a Path>,
    /// The layer is Flux's type, which a default Argo CD repo-server refuses.
    pub flux_layer: bool,
    /// `--argo-server`, else the cluster Argo CD runs in.
    pub argo_server: Option<&'a str>,
}

/// `--print-flux` / `--print-argo`: the objects that sync the artifact (stdout), and how
/// to create what they name (`[info]`); nothing is pushed.
///
/// # Errors
/// A write to stdout.
pub fn print(
    cx: Context<'_>,
    domain: &Domain,
    target: &Reference,
    m: &Manifest<'_>,
) -> Result<i32> {
    let name = layout::object_name(domain);
    let credentials = m.access.creds_env.is_some() || oci::has_credentials(&target.registry);
    let text = if m.flux {
        let access = layout::RegistryAccess {
            credentials,
            ca: m.access.ca_file.is_some(),
            insecure: m.access.plain_http,
            verify: m.sign.is_some(),
        };
        for line in secret_advice(&name, target, &access, m) {
            cx.console.info(&line);
        }
        layout::flux_oci(domain, &target.url(), &target.tag, access)
    } else {
        if m.flux_layer {
            cx.console.warn(
                "a default Argo CD repo-server refuses Flux's layer type: push with --layer-media-type oci for Argo CD",
            );
        }
        let ca = m.access.ca_file.as_ref().map(|f| f.display().to_string());
        let access = layout::ArgoRegistry {
            credentials,
            ca_file: ca.as_deref(),
            plain_http: m.access.plain_http,
        };
        for line in layout::argo_oci_advice(&name, &target.url(), access) {
            cx.console.info(&line);
        }
        let server = m
            .argo_server
            .map_or(layout::IN_CLUSTER.into(), str::to_string);
        let destination = layout::Destination::Server(server);
        layout::argo(domain, ".", &target.tag, &target.url(), &destination)
    };
    cx.console.data(&text)?;
    Ok(exit::OK)
}

/// How to create the Secrets the printed OCIRepository names (placeholders only).
fn secret_advice(
    name: &str,
    target: &Reference,
    access: &layout::RegistryAccess,
    m: &Manifest<'_>,
) -> Vec<String> {
    let mut out = Vec::new();
    if access.credentials {
        out.push(format!(
            "source-controller pulls from {} with the Secret flux-system/{name} (spec.secretRef); create it first: kubectl -n flux-system create secret docker-registry {name} --docker-server={} --docker-username=<user> --docker-password=<password>",
            target.registry, target.registry
        ));
    }
    if let Some(ca) = &m.access.ca_file {
        out.push(format!(
            "and the registry's CA (spec.certSecretRef): kubectl -n flux-system create secret generic {name}-ca --from-file=ca.crt={}",
            ca.display()
        ));
    }
    if let Some(key) = m.sign {
        out.push(format!(
            "and the public key that verifies the signature (spec.verify): openssl pkey -in {} -pubout > cosign.pub && kubectl -n flux-system create secret generic {name}-cosign --from-file=cosign.pub",
            key.display()
        ));
    }
    out
}
