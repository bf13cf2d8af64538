//! The status side: the project's addon index ([`index`], fetched and cached by
//! [`fetch`]), the updates an index offers an inventory ([`updates`]), Helm release
//! records ([`helm`]) and the in-cluster agent that writes `status` ([`agent`]).

pub mod agent;
pub mod fetch;
pub mod helm;
pub mod index;
pub mod updates;
