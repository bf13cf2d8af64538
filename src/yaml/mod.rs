//! YAML in and out, one parser for both directions of clinv.
//!
//! A reader with Go `yaml.v3` node semantics on `saphyr-parser` ([`read`]: what lok8s's
//! files and Kubernetes objects say), and an emitter that writes YAML as clinv always has
//! ([`emit`]).

pub mod emit;
mod read;

pub use read::{Doc, Documents, Node, NodeId, Pos, Tag, YamlError, json_string, resolve_plain};
