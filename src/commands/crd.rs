//! `clinv crd`: the CustomResourceDefinition.

use crate::cli::OutputFormat;
use crate::error::{Result, exit};
use crate::render::{self, Format};
use crate::settings::Settings;

pub fn run(settings: &Settings) -> Result<i32> {
    let format = match settings.format("crd", &[OutputFormat::Yaml, OutputFormat::Json])? {
        OutputFormat::Json => Format::Json,
        _ => Format::Yaml,
    };
    settings
        .printer
        .data(&render::encode(&crate::crd::definition(), format)?)?;
    Ok(exit::OK)
}
