//! Whether a domain's far end answers at all, before a delivery is tried: one TCP
//! connect to the API server (or to the proxy that carries its requests).
//!
//! A refused or black-holed cluster then costs the loop a socket and a timer, not a
//! kubeconfig read, a credential plugin and a TLS handshake: a thousand unreachable
//! domains stay under 1 % of a core. The probes run as tasks on the process's runtime,
//! many at once, each bounded by its timeout; the answers come back through `done`.

use crate::delivery::Reason;
use crate::domain::Domain;
use std::time::Duration;

/// Where a probe connects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

/// The probes' mailbox.
pub struct Prober {
    tx: tokio::sync::mpsc::UnboundedSender<(Domain, Endpoint)>,
}

impl Prober {
    /// Starts the probes' task on the process's runtime; each probe's answer is handed
    /// to `done` (from a runtime thread): `Ok(())` when the connection opened, else why
    /// not.
    ///
    /// # Errors
    /// The runtime cannot start.
    pub fn start(
        timeout: Duration,
        done: impl Fn(Domain, Result<(), Reason>) + Send + Sync + 'static,
    ) -> std::io::Result<Prober> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(Domain, Endpoint)>();
        let done = std::sync::Arc::new(done);
        crate::util::runtime::get()?.spawn(async move {
            while let Some((domain, endpoint)) = rx.recv().await {
                let done = done.clone();
                tokio::spawn(async move {
                    done(domain, connect(&endpoint, timeout).await);
                });
            }
        });
        Ok(Prober { tx })
    }

    /// Probes `endpoint` for `domain`; the answer comes through `done`.
    pub fn probe(&self, domain: Domain, endpoint: Endpoint) {
        // The task ends only when the prober is dropped: a send cannot fail before.
        let _ = self.tx.send((domain, endpoint));
    }
}

async fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<(), Reason> {
    let addr = (endpoint.host.as_str(), endpoint.port);
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_stream)) => Ok(()),
        Ok(Err(_)) | Err(_) => Err(Reason::Unreachable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_listening_port_answers_and_a_closed_one_does_not() {
        let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let (tx, rx) = mpsc::channel();
        let prober = Prober::start(Duration::from_secs(2), move |d, r| {
            tx.send((d.to_string(), r)).unwrap();
        })
        .unwrap();
        let at = |port| Endpoint {
            host: "127.0.0.1".into(),
            port,
        };
        prober.probe(
            Domain::parse("up.example").unwrap(),
            at(open.local_addr().unwrap().port()),
        );
        prober.probe(Domain::parse("down.example").unwrap(), at(closed_port));
        let mut got: Vec<_> = (0..2).map(|_| rx.recv().unwrap()).collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            got,
            [
                ("down.example".to_string(), Err(Reason::Unreachable)),
                ("up.example".to_string(), Ok(()))
            ]
        );
    }
}
