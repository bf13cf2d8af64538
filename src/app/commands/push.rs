//! `clinv push oci://…`: a domain's inventory as an OCI artifact in a registry
//! ([`crate::ops::push`], said by [`crate::view::push`]).

use super::{StoreOnly, context};
use crate::app::Result;
use crate::app::cli::{LayerMediaType, PushArgs};
use crate::app::settings::Settings;
use crate::domain::Domain;
use crate::error::ArgumentError;
use crate::oci::{self, LayerType};
use crate::ops::push::{self as ops, DOMAIN, Options};
use crate::view::push as view;

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
        return Ok(one(settings, args, &opened, &domain, &target)?);
    };
    if !args.target.contains(DOMAIN) {
        return Err(crate::app::Failure::Usage(format!(
            "push with several domains: each domain is an artifact of its own; put {DOMAIN} in OCI_URL (oci://registry/inventory/{DOMAIN}:latest)"
        )));
    }
    let worst = ops::several(
        &settings.printer,
        &domains,
        &args.target,
        |domain, target| one(settings, args, &opened, domain, target),
    );
    super::say_deploy_domains(settings);
    Ok(worst)
}

/// One domain's artifact: pushed, or its Flux/Argo objects printed.
fn one(
    settings: &Settings,
    args: &PushArgs,
    opened: &StoreOnly,
    domain: &Domain,
    target: &oci::Reference,
) -> crate::Result<i32> {
    let access = super::registry_access(&args.registry);
    if args.print_flux || args.print_argo {
        let manifest = view::Manifest {
            flux: args.print_flux,
            access: &access,
            sign: args.sign.as_deref(),
            flux_layer: args.layer_media_type == LayerMediaType::Flux,
            argo_server: args.argo_server.as_deref(),
        };
        return view::print(context(settings), domain, target, &manifest);
    }
    let annotations = ops::parse_annotations(&args.annotations)?;
    let signer = args.sign.as_deref().map(oci::signing_key).transpose()?;
    let Some(source) = opened.delivered(settings, args.snapshot.as_deref()) else {
        return Err(ArgumentError::NothingToPush.into());
    };
    let opts = Options {
        target,
        layer: match args.layer_media_type {
            LayerMediaType::Flux => LayerType::Flux,
            LayerMediaType::Oci => LayerType::Oci,
        },
        source: args.source.as_deref(),
        annotations: &annotations,
        access,
        signer: signer.as_ref(),
        sign_key: args.sign.as_deref(),
        project_root: opened.project.as_ref().map(|p| p.root()),
    };
    let report = ops::run(&opened.store.domain(domain), &source, &opts);
    view::say(
        context(settings),
        domain,
        report,
        args.output.unwrap_or_default(),
    )
}
