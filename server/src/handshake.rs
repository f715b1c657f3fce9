//! A connection's handshake: OPTIONS, STARTUP (with LZ4 or no compression), the SASL PLAIN
//! login under `--auth` (failures slowed by `login.rs` and logged), REGISTER; anything else
//! before the handshake is done is refused. It decides answers; the connection frames and
//! sends them.

use std::collections::HashMap;
use std::net::SocketAddr;

use cassandra_protocol::frame::message_error::ErrorType;
use cassandra_protocol::frame::message_supported::BodyResSupported;
use cassandra_protocol::frame::{Opcode, Serialize, Version};

use crate::auth::Credentials;
use crate::dispatch::Answer;
use crate::login::Throttle;
use crate::request::Request;
use crate::{results, Config};

/// Where a connection's handshake stands.
pub struct Handshake {
    ready: bool,
    /// LZ4 was negotiated at STARTUP.
    pub lz4: bool,
    /// Authenticated, or no authentication asked for.
    authenticated: bool,
    failures: u32,
    peer: SocketAddr,
    /// The user who logged in (taken by the connection).
    pub user: Option<String>,
}

/// What to do with a request.
pub enum Step {
    /// Answer it with this (compressed when the flag says so).
    Answer(Answer, bool),
    /// Run it on the engine.
    Run(Request),
}

fn protocol_error(message: &str, version: Version) -> Answer {
    (
        Opcode::Error,
        results::error(ErrorType::Protocol, message, version),
    )
}

impl Handshake {
    /// A new connection's, from `peer`; `open` when no authentication is asked for.
    pub fn new(open: bool, peer: SocketAddr) -> Handshake {
        Handshake {
            ready: false,
            lz4: false,
            authenticated: open,
            failures: 0,
            peer,
            user: None,
        }
    }

    /// STARTUP was accepted.
    pub fn started(&self) -> bool {
        self.ready
    }

    /// STARTUP and the login are done.
    pub fn done(&self) -> bool {
        self.ready && self.authenticated
    }

    /// The step for `request`.
    pub async fn answer(
        &mut self,
        request: Request,
        version: Version,
        config: &Config,
        throttle: &Throttle,
    ) -> Step {
        match request {
            Request::Options => Step::Answer(supported(version), false),
            Request::Startup(map) => Step::Answer(self.startup(&map, version), false),
            _ if !self.ready => Step::Answer(protocol_error("send STARTUP first", version), false),
            Request::AuthResponse(token) => {
                let token = token.unwrap_or_default();
                let answer = self.login(token, version, config, throttle).await;
                Step::Answer(answer, self.lz4)
            }
            _ if !self.authenticated => Step::Answer(
                protocol_error("authenticate first (AUTH_RESPONSE)", version),
                false,
            ),
            Request::Register(_) => Step::Answer((Opcode::Ready, Vec::new()), self.lz4),
            request => Step::Run(request),
        }
    }

    fn startup(&mut self, map: &HashMap<String, String>, version: Version) -> Answer {
        let lz4 = match map.get("COMPRESSION").map(String::as_str) {
            None => false,
            Some(c) if c.eq_ignore_ascii_case("lz4") => true,
            Some(c) => {
                return protocol_error(
                    &format!("unsupported compression '{c}' (this server has lz4)"),
                    version,
                )
            }
        };
        self.ready = true;
        self.lz4 = lz4;
        if self.authenticated {
            return (Opcode::Ready, Vec::new());
        }
        let mut body = Vec::new();
        let class = crate::auth::AUTHENTICATOR.as_bytes();
        body.extend_from_slice(&(class.len() as u16).to_be_bytes());
        body.extend_from_slice(class);
        (Opcode::Authenticate, body)
    }

    async fn login(
        &mut self,
        token: Vec<u8>,
        version: Version,
        config: &Config,
        throttle: &Throttle,
    ) -> Answer {
        let Some(creds) = config.auth.clone().filter(|_| !self.authenticated) else {
            return protocol_error(
                "no authentication is in progress on this connection",
                version,
            );
        };
        let user = Credentials::user_of(&token).unwrap_or("").to_string();
        let Ok(Ok(_check)) =
            tokio::time::timeout(config.handshake_timeout, throttle.checks.acquire()).await
        else {
            return (
                Opcode::Error,
                results::error(
                    ErrorType::Overloaded,
                    "too many logins at once: try again",
                    version,
                ),
            );
        };
        // bcrypt takes milliseconds on purpose: not on the reactor.
        let who = tokio::task::spawn_blocking(move || creds.check(&token))
            .await
            .ok()
            .flatten();
        if who.is_some() {
            self.authenticated = true;
            throttle.succeeded(&user);
            self.user = who;
            // AUTH_SUCCESS with a null token.
            return (Opcode::AuthSuccess, (-1i32).to_be_bytes().to_vec());
        }
        self.failures += 1;
        let delay = throttle.failed(&user, self.failures);
        tracing::warn!(
            peer = %self.peer,
            user = %user.escape_debug(),
            failures_on_connection = self.failures,
            delay_ms = delay.as_millis() as u64,
            "failed login"
        );
        tokio::time::sleep(delay).await;
        (
            Opcode::Error,
            results::error(
                ErrorType::Authentication,
                "Provided username and/or password are incorrect",
                version,
            ),
        )
    }
}

fn supported(version: Version) -> Answer {
    let data: HashMap<String, Vec<String>> = [
        ("CQL_VERSION", vec![crate::CQL_VERSION.to_string()]),
        ("COMPRESSION", vec!["lz4".to_string()]),
        ("PROTOCOL_VERSIONS", vec!["3/v3".into(), "4/v4".into()]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    (
        Opcode::Supported,
        BodyResSupported { data }.serialize_to_vec(version),
    )
}
