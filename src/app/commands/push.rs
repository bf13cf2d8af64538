//! `clinv push oci://…`: a domain's inventory as an OCI artifact in a registry.

use super::StoreOnly;
use crate::app::Result;
use crate::app::cli::{LayerMediaType, PushArgs, PushFormat};
use crate::app::settings::Settings;
use crate::error::{ArgumentError, exit};
use crate::oci::{self, LayerType};
use crate::ops::push::{self as ops, Options};

pub fn run(settings: &Settings, args: &PushArgs) -> Result<i32> {
    if !args.target.contains(DOMAIN) {
        // A malformed reference is said before anything is read.
        oci::parse_tag(&args.target)?;
    }
    let opened = StoreOnly::open(settings)?;
    let snapshot = args.snapshot.as_deref();
    let Some(domains) = opened.delivered_fleet(&args.domain, snapshot)? else {
        let domain = opened.delivered_domain(settings, args.domain.one(), snapshot)?;
        let target = oci::parse_tag(&args.target.replace(DOMAIN, domain.as_str()))?;
        return one(settings, args, &opened, &domain, &target);
    };
    if !args.target.contains(DOMAIN) {
        return Err(crate::app::Failure::Usage(format!(
            "push with several domains: each domain is an artifact of its own; put {DOMAIN} in OCI_URL (oci://registry/inventory/{DOMAIN}:latest)"
        )));
    }
    // Each domain in turn, each said as a push of one; a domain that fails is an error
    // line and the worst exit code, and the others are pushed.
    let mut worst = exit::OK;
    for domain in &domains {
        let target = args.target.replace(DOMAIN, domain.as_str());
        let code = oci::parse_tag(&target)
            .map_err(crate::app::Failure::from)
            .and_then(|target| one(settings, args, &opened, domain, &target))
            .unwrap_or_else(|e| {
                settings.printer.error(&format!("{domain}: {e}"));
                e.exit_code()
            });
        worst = worst.max(code);
    }
    super::say_deploy_domains(settings);
    Ok(worst)
}

/// The placeholder of OCI_URL that names each domain's artifact.
const DOMAIN: &str = "{domain}";

/// One domain's artifact: pushed, or its Flux/Argo objects printed.
fn one(
    settings: &Settings,
    args: &PushArgs,
    opened: &StoreOnly,
    domain: &crate::domain::Domain,
    target: &oci::Reference,
) -> Result<i32> {
    if args.print_flux || args.print_argo {
        return print(settings, args, domain, target);
    }
    let annotations = args
        .annotations
        .iter()
        .map(|a| match a.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(ArgumentError::Annotation(a.clone())),
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(crate::Error::from)?;
    let signer = args.sign.as_deref().map(oci::signing_key).transpose()?;
    let Some(source) = opened.delivered(settings, args.snapshot.as_deref()) else {
        return Err(crate::Error::from(ArgumentError::NothingToPush).into());
    };
    let opts = Options {
        target,
        layer: match args.layer_media_type {
            LayerMediaType::Flux => LayerType::Flux,
            LayerMediaType::Oci => LayerType::Oci,
        },
        source: args.source.as_deref(),
        annotations: &annotations,
        access: super::registry_access(&args.registry),
        signer: signer.as_ref(),
        sign_key: args.sign.as_deref(),
        project_root: opened.project.as_ref().map(|p| p.root()),
    };
    let report = ops::run(&opened.store.domain(domain), &source, &opts);
    super::voice(settings).delivered(domain, report, |push| {
        pushed(settings, *push, args.output.unwrap_or_default())
    })
}

fn pushed(settings: &Settings, push: ops::Push, format: PushFormat) -> Result<i32> {
    let (Some(pushed), None) = (&push.pushed, &push.owed) else {
        return match push.owed {
            Some(owing) => Ok(super::voice(settings).owed_push(owing)?),
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
    settings.printer.info(&format!(
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
    settings.printer.data(&text)?;
    if let Some(e) = &push.not_recorded {
        settings.printer.warn(&format!(
            "snapshot {}: pushed, but the store could not record it: {}",
            push.snapshot.id,
            crate::error::chain(e)
        ));
    }
    Ok(exit::OK)
}

/// `--print-flux` / `--print-argo`: the objects that sync the artifact; nothing is pushed.
fn print(
    settings: &Settings,
    args: &PushArgs,
    domain: &crate::domain::Domain,
    target: &oci::Reference,
) -> Result<i32> {
    use crate::gitops::layout;
    let name = layout::object_name(domain);
    let text = if args.print_flux {
        let access = layout::RegistryAccess {
            credentials: args.registry.creds_env.is_some()
                || oci::has_credentials(&target.registry),
            ca: args.registry.ca_file.is_some(),
            insecure: args.registry.plain_http || args.registry.insecure,
            verify: args.sign.is_some(),
        };
        for line in secret_advice(&name, target, &access, args) {
            settings.printer.info(&line);
        }
        layout::flux_oci(domain, &target.url(), &target.tag, access)
    } else {
        if args.layer_media_type == LayerMediaType::Flux {
            settings.printer.warn(
                "a default Argo CD repo-server refuses Flux's layer type: push with --layer-media-type oci for Argo CD",
            );
        }
        let ca = args
            .registry
            .ca_file
            .as_ref()
            .map(|f| f.display().to_string());
        let access = layout::ArgoRegistry {
            credentials: args.registry.creds_env.is_some()
                || oci::has_credentials(&target.registry),
            ca_file: ca.as_deref(),
            plain_http: args.registry.plain_http || args.registry.insecure,
        };
        for line in layout::argo_oci_advice(&name, &target.url(), access) {
            settings.printer.info(&line);
        }
        let server = args.argo_server.clone();
        let destination =
            layout::Destination::Server(server.unwrap_or_else(|| layout::IN_CLUSTER.into()));
        layout::argo(domain, ".", &target.tag, &target.url(), &destination)
    };
    settings.printer.data(&text)?;
    Ok(exit::OK)
}

/// How to create the Secrets the printed OCIRepository names (placeholders only).
fn secret_advice(
    name: &str,
    target: &oci::Reference,
    access: &crate::gitops::layout::RegistryAccess,
    args: &PushArgs,
) -> Vec<String> {
    let mut out = Vec::new();
    if access.credentials {
        out.push(format!(
            "source-controller pulls from {} with the Secret flux-system/{name} (spec.secretRef); create it first: kubectl -n flux-system create secret docker-registry {name} --docker-server={} --docker-username=<user> --docker-password=<password>",
            target.registry, target.registry
        ));
    }
    if let Some(ca) = &args.registry.ca_file {
        out.push(format!(
            "and the registry's CA (spec.certSecretRef): kubectl -n flux-system create secret generic {name}-ca --from-file=ca.crt={}",
            ca.display()
        ));
    }
    if let Some(key) = &args.sign {
        out.push(format!(
            "and the public key that verifies the signature (spec.verify): openssl pkey -in {} -pubout > cosign.pub && kubectl -n flux-system create secret generic {name}-cosign --from-file=cosign.pub",
            key.display()
        ));
    }
    out
}
