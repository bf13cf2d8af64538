//! `clinv render`: the inventory on stdout, or the CR and CRD as files
//! ([`crate::ops::render`]).

use super::{context, domain, project};
use crate::app::cli::{DocFormat, RenderArgs};
use crate::app::settings::Settings;
use crate::app::{Failure, Result};
use crate::console::Console as _;
use crate::error::exit;
use crate::inventory::render::{self, Format};
use crate::ops::render as ops;

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
        return Ok(ops::several(&project, &domains, dir, context(settings))?);
    }
    let domain = domain(settings, &project, args.domain.one())?;
    let inventory = ops::one(&project, &domain, context(settings))?;
    match &args.out {
        Some(dir) => ops::write(dir, &inventory, context(settings))?,
        None => {
            let format = match format {
                DocFormat::Json => Format::Json,
                _ => Format::Yaml,
            };
            settings
                .printer
                .data(&render::encode(&inventory, format)?)?;
        }
    }
    Ok(exit::OK)
}
