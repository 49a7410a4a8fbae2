//! One WebSocket connection: reads messages into its [`Session`], writes answers and table
//! events through a bounded outbox, pings the peer, and closes idle or silent connections.

use crate::config::{OUTBOX, PING_SECS, SEND_PATIENCE_SECS};
use crate::hub::{Hub, Place};
use crate::protocol::{ErrorCode, ErrorReply, Outgoing, Reply};
use crate::session::{Outbound, Session};
use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// WebSocket close code: normal closure.
const CLOSE_NORMAL: u16 = 1000;
/// WebSocket close code: policy violation (a peer too slow to read its messages).
const CLOSE_POLICY: u16 = 1008;
/// WebSocket close code: message too big.
const CLOSE_TOO_BIG: u16 = 1009;

/// Queues `message` without waiting; `false` when the outbox is full or closed.
fn push(out: &mpsc::Sender<Outbound>, message: Outbound) -> bool {
    out.try_send(message).is_ok()
}

/// Queues `message`, waiting up to [`SEND_PATIENCE_SECS`] for room in the outbox: a peer that
/// sends faster than it reads is slowed down (its next message is read only then), and one
/// that does not read at all is dropped. `false` when it must be dropped.
async fn deliver(out: &mpsc::Sender<Outbound>, message: Outbound) -> bool {
    out.send_timeout(message, Duration::from_secs(SEND_PATIENCE_SECS))
        .await
        .is_ok()
}

/// Serves one upgraded connection until it closes; `slot` holds its place in the limit.
pub async fn serve(socket: WebSocket, hub: Arc<Hub>, ip: IpAddr, slot: Place) {
    let (mut sink, mut stream) = socket.split();
    let (out, mut outbox) = mpsc::channel::<Outbound>(OUTBOX);
    let writer = tokio::spawn(async move {
        while let Some(message) = outbox.recv().await {
            let (frame, last) = match message {
                Outbound::Text(text) => (Message::Text(text.as_ref().into()), false),
                Outbound::Ping => (Message::Ping(Default::default()), false),
                Outbound::Close(code, reason) => (
                    Message::Close(Some(CloseFrame {
                        code,
                        reason: reason.into(),
                    })),
                    true,
                ),
            };
            if sink.send(frame).await.is_err() || last {
                break;
            }
        }
        // The peer may be gone already; closing is all that is left to do.
        let _ = sink.close().await;
    });

    let idle = hub.config.idle;
    let ping_every = Duration::from_secs(PING_SECS);
    let tick = ping_every.min(idle / 4).max(Duration::from_millis(50));
    let mut ticker = tokio::time::interval(tick);
    let mut session = Session::new(hub, ip, out.clone());
    let mut last_message = Instant::now();
    let mut last_frame = Instant::now();
    let mut last_ping = Instant::now();
    let text = |reply: Reply| Outbound::Text(Outgoing::to(None, reply).to_json().into());

    loop {
        tokio::select! {
            frame = stream.next() => {
                let now = Instant::now();
                last_frame = now;
                match frame {
                    Some(Ok(Message::Text(t))) => {
                        last_message = now;
                        let mut read = true;
                        for r in session.handle(t.as_str()) {
                            if !deliver(&out, Outbound::Text(r.to_json().into())).await {
                                read = false;
                                break;
                            }
                        }
                        if !read {
                            push(&out, Outbound::Close(CLOSE_POLICY, "not reading".into()));
                            break;
                        }
                    }
                    Some(Ok(Message::Binary(_))) => {
                        last_message = now;
                        let reply = session.handle_binary();
                        if !deliver(&out, Outbound::Text(reply.to_json().into())).await {
                            break;
                        }
                    }
                    // Pings are answered by the transport; both show the peer is alive.
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                    Some(Ok(Message::Close(_))) | None => break,
                    Some(Err(e)) => {
                        // Past the transport's size limit, or a broken frame: say why, close.
                        let why = format!("{e}");
                        let code = if why.contains("too long") || why.contains("too big") {
                            CLOSE_TOO_BIG
                        } else {
                            CLOSE_POLICY
                        };
                        push(&out, text(Reply::Error(ErrorReply::new(ErrorCode::TooLarge, why.clone()))));
                        push(&out, Outbound::Close(code, why.chars().take(100).collect()));
                        break;
                    }
                }
            }
            event = session.next_event() => {
                if let Some(message) = session.on_event(event)
                    && !deliver(&out, Outbound::Text(message)).await
                {
                    push(&out, Outbound::Close(CLOSE_POLICY, "not reading".into()));
                    break;
                }
            }
            _ = ticker.tick() => {
                let now = Instant::now();
                if now.duration_since(last_message) > idle {
                    let why = format!("closing this connection: nothing received for {} s", idle.as_secs());
                    push(&out, text(Reply::Error(ErrorReply::new(ErrorCode::Expired, why))));
                    push(&out, Outbound::Close(CLOSE_NORMAL, "idle".into()));
                    break;
                }
                if now.duration_since(last_frame) > ping_every * 3 {
                    break;
                }
                if now.duration_since(last_ping) >= ping_every {
                    last_ping = now;
                    push(&out, Outbound::Ping);
                }
            }
        }
    }
    // Leave the table (the others see the seat empty), then let the writer finish its queue.
    drop(session);
    drop(out);
    // A writer stuck on a dead peer is stopped after a second.
    let mut writer = writer;
    if tokio::time::timeout(Duration::from_secs(1), &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
    drop(slot);
}
