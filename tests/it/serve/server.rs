//! Starting `oware serve` on a free port, and a WebSocket client that speaks its protocol.

use crate::common::BIN;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long a test waits for any one message.
pub(super) const WAIT: Duration = Duration::from_secs(20);

/// A running `oware serve`, killed when dropped.
pub(super) struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Starts `oware serve --addr 127.0.0.1:0 ARGS` and waits for its address.
    pub(super) fn start(args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starts oware serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let first = lines
            .next()
            .expect("oware serve prints its address")
            .expect("readable stdout");
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.strip_suffix('/'))
            .unwrap_or_else(|| panic!("no address in '{first}'"))
            .to_string();
        // Keep reading so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server { child, addr }
    }

    /// The URL of `path`.
    pub(super) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The server's process id (for its memory in /proc).
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A new WebSocket client.
    pub(super) async fn client(&self) -> Client {
        Client::connect(&self.addr).await
    }

    /// GETs `path`: status, content type and body.
    pub(super) fn get(&self, path: &str) -> (u16, String, String) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let mut res = agent.get(&self.url(path)).call().expect("HTTP answer");
        let status = res.status().as_u16();
        let ctype = res
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = res.body_mut().read_to_string().expect("body");
        (status, ctype, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The server may have exited already; killing is all that is left to do.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A WebSocket client of the server.
pub(super) struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Client {
    /// Connects to `/ws`.
    pub(super) async fn connect(addr: &str) -> Client {
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
            .await
            .expect("WebSocket handshake");
        Client { ws }
    }

    /// Connects to `/ws` from the loopback address `source` (any of 127.0.0.0/8), as a
    /// client of another address would; the error when the server refuses.
    pub(super) async fn connect_from(
        addr: &str,
        source: std::net::Ipv4Addr,
    ) -> Result<Client, String> {
        let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
        socket
            .bind((source, 0).into())
            .map_err(|e| format!("binding {source}: {e}"))?;
        let target: std::net::SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
        let stream = socket.connect(target).await.map_err(|e| e.to_string())?;
        let (ws, _) = tokio_tungstenite::client_async(
            format!("ws://{addr}/ws"),
            MaybeTlsStream::Plain(stream),
        )
        .await
        .map_err(|e| e.to_string())?;
        Ok(Client { ws })
    }

    /// Sends a JSON message.
    pub(super) async fn send(&mut self, v: Value) {
        self.send_text(&v.to_string()).await;
    }

    /// Sends any text.
    pub(super) async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.into()))
            .await
            .expect("sends");
    }

    /// Sends a raw frame.
    pub(super) async fn send_message(&mut self, m: Message) {
        self.ws.send(m).await.expect("sends");
    }

    /// The next text message as JSON; `None` when the server closed the connection.
    pub(super) async fn next(&mut self) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a message within the wait");
            match frame {
                Some(Ok(Message::Text(t))) => {
                    return Some(serde_json::from_str(&t).expect("JSON from the server"));
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next close frame's code, skipping text; `None` if the stream just ended.
    pub(super) async fn close_code(&mut self) -> Option<u16> {
        loop {
            let frame = tokio::time::timeout(WAIT, self.ws.next())
                .await
                .expect("a frame within the wait");
            match frame {
                Some(Ok(Message::Close(Some(f)))) => return Some(f.code.into()),
                Some(Ok(Message::Close(None))) | None | Some(Err(_)) => return None,
                Some(Ok(_)) => continue,
            }
        }
    }

    /// The next message of type `ty`, skipping others.
    pub(super) async fn expect(&mut self, ty: &str) -> Value {
        loop {
            let m = self
                .next()
                .await
                .unwrap_or_else(|| panic!("connection closed while waiting for '{ty}'"));
            if m["type"] == ty {
                return m;
            }
        }
    }

    /// The next error reply, which must have `code`.
    pub(super) async fn expect_error(&mut self, code: &str) -> Value {
        let e = self.expect("error").await;
        assert_eq!(e["code"], code, "{e}");
        e
    }

    /// The next state satisfying `pred`.
    pub(super) async fn state_where(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            let s = self.expect("state").await;
            if pred(&s) {
                return s;
            }
        }
    }

    /// The next state at ply `ply`.
    pub(super) async fn state_at(&mut self, ply: u64) -> Value {
        self.state_where(|s| s["ply"] == ply).await
    }

    /// Sends `request` and returns `joined` and the first state.
    pub(super) async fn join(&mut self, request: Value) -> (Value, Value) {
        self.send(request).await;
        let joined = self.expect("joined").await;
        let state = self.expect("state").await;
        (joined, state)
    }

    /// Plays `house` and waits for the state after it.
    pub(super) async fn play(&mut self, house: &str, ply_after: u64) -> Value {
        self.send(json!({"type": "move", "house": house})).await;
        self.state_at(ply_after).await
    }
}

/// `oware replay --json` of one line of moves: its JSON object.
pub(super) fn replay_json(moves: &str) -> Value {
    let mut child = Command::new(BIN)
        .args(["replay", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs oware replay");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("{moves}\n").as_bytes())
        .expect("writes the moves");
    let out = child.wait_with_output().expect("replay output");
    serde_json::from_slice(&out.stdout).expect("replay JSON")
}

/// The fields of a state that `oware replay --json` also writes.
pub(super) fn replay_fields(state: &Value) -> Value {
    let keys = [
        "board", "captured", "to_move", "ply", "legal", "terminal", "result",
    ];
    Value::Object(
        keys.iter()
            .map(|k| (k.to_string(), state[*k].clone()))
            .collect(),
    )
}

/// The moves of a state as a line for `oware replay`.
pub(super) fn moves_line(state: &Value) -> String {
    state["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m.as_str().expect("letter"))
        .collect::<Vec<_>>()
        .join(" ")
}
