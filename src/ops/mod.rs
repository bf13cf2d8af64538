//! The flows behind the commands that combine several modules (cargo's `ops`): each
//! takes plain settings, does its effects through the modules that own them and returns
//! typed outcomes, with the messages of the way there, for the command line to print.

pub mod agent;
pub mod drift;
pub mod publish;
pub mod replay;
pub mod status;
