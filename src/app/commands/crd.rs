//! `clinv crd`: the CustomResourceDefinition.

use crate::app::Result;
use crate::app::cli::{CrdArgs, DocFormat};
use crate::app::settings::Settings;
use crate::console::Console as _;
use crate::error::exit;
use crate::inventory::render::{self, Format};

pub fn run(settings: &Settings, args: &CrdArgs) -> Result<i32> {
    let format = match args.output.unwrap_or_default() {
        DocFormat::Json => Format::Json,
        DocFormat::Yaml => Format::Yaml,
    };
    settings.printer.data(&render::encode(
        &crate::inventory::crd::definition(),
        format,
    )?)?;
    Ok(exit::OK)
}
