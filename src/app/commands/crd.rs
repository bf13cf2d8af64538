//! `clinv crd`: the CustomResourceDefinition.

use crate::app::cli::OutputFormat;
use crate::app::settings::Settings;
use crate::error::{Result, exit};
use crate::inventory::render::{self, Format};

pub fn run(settings: &Settings) -> Result<i32> {
    let format = match settings.format("crd", &[OutputFormat::Yaml, OutputFormat::Json])? {
        OutputFormat::Json => Format::Json,
        _ => Format::Yaml,
    };
    settings.printer.data(&render::encode(
        &crate::inventory::crd::definition(),
        format,
    )?)?;
    Ok(exit::OK)
}
