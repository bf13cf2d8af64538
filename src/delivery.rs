//! The outcomes both delivery channels share: why an inventory did not reach the
//! cluster ([`Reason`], persisted by the store and mapped to `--strict` exit codes) and
//! where it was going ([`Target`]). A leaf: it depends on nothing else of the crate, so
//! the on-disk journal format does not depend on the kube client.

/// Why an inventory could not be applied. Each has its own `--strict` exit code.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Reason {
    /// No kubeconfig file where it was looked for.
    NoKubeconfig,
    /// The kubeconfig cannot be read or names no usable cluster/context.
    BadKubeconfig,
    /// Connection refused, DNS, TLS, timeouts: the server did not answer in time.
    Unreachable,
    /// 401: the credentials were not accepted.
    Unauthorized,
    /// 403: authenticated but missing RBAC.
    Forbidden,
    /// 409: another field manager owns a field with a different value.
    Conflict,
    /// 5xx, or a response that is not the API's.
    ServerError,
    /// 4xx other than the above: the server refused the object.
    Rejected,
    /// The inventory could not be rendered.
    RenderFailed,
}

impl Reason {
    /// The name in the journal and in messages (the serde name; a test holds them equal).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a client points: recorded with snapshots; never credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub server: String,
    pub context: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn display_names_are_the_serde_names() {
        for r in Reason::VARIANTS {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
            assert_eq!(r.to_string(), r.as_str());
        }
    }
}
