//! The HTTP side: the page and its files (built into the binary), `/api/info`, the WebSocket
//! endpoint `/ws`, and the server's main loop.

use crate::ai::Roster;
use crate::config::{MAX_MESSAGE_BYTES, MAX_TRANSPORT_BYTES, ServeConfig};
use crate::hub::Hub;
use anyhow::Context;
use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const STYLE_CSS: &str = include_str!("../assets/style.css");
const FAVICON_SVG: &str = include_str!("../assets/favicon.svg");

/// The page may load only its own files and talk only to its own server.
const CSP: &str = "default-src 'self'; connect-src 'self'; img-src 'self' data:; \
style-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// A file of the page with its type and the security headers.
fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The routes.
pub fn router(hub: Arc<Hub>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset(INDEX_HTML, "text/html; charset=utf-8") }),
        )
        .route(
            "/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/style.css",
            get(|| async { asset(STYLE_CSS, "text/css; charset=utf-8") }),
        )
        .route(
            "/favicon.svg",
            get(|| async { asset(FAVICON_SVG, "image/svg+xml") }),
        )
        .route("/api/info", get(info))
        .route("/ws", get(websocket))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found: the page is at /\n") })
        .with_state(hub)
}

/// The players offered and the limits, for the page.
async fn info(State(hub): State<Arc<Hub>>) -> Response {
    let ais: Vec<_> = hub
        .roster
        .ais
        .iter()
        .enumerate()
        .map(|(i, a)| json!({ "index": i, "spec": a.spec, "label": a.label }))
        .collect();
    let (rooms, games) = hub.counts();
    let body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "ais": ais,
        "analysis": hub.roster.analysis.spec,
        "limits": {
            "max_message_bytes": MAX_MESSAGE_BYTES,
            "max_rooms": hub.config.max_rooms,
            "max_games": hub.config.max_games,
            "max_connections": hub.config.max_connections,
            "idle_secs": hub.config.idle.as_secs_f64(),
        },
        "open": { "rooms": rooms, "games": games, "connections": hub.connections(),
                  "searches": hub.pool.queued() },
    });
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        axum::Json(body),
    )
        .into_response()
}

/// Whether a browser's `Origin` names the host it asks (pages of other sites may not open a
/// connection here); clients without `Origin` (not browsers) may.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, rest)| rest.trim_end_matches('/'));
    matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h))
}

/// The WebSocket endpoint.
async fn websocket(
    State(hub): State<Arc<Hub>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    if !same_origin(&headers) {
        return (StatusCode::FORBIDDEN, "cross-origin WebSocket refused\n").into_response();
    }
    let Some(slot) = hub.connection_slot() else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server holds its maximum of {} connections: try again later\n",
                hub.config.max_connections
            ),
        )
            .into_response();
    };
    ws.max_message_size(MAX_TRANSPORT_BYTES)
        .max_frame_size(MAX_TRANSPORT_BYTES)
        .on_upgrade(move |socket| crate::socket::serve(socket, hub, peer.ip(), slot))
}

/// Ends on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        // Without a Ctrl-C handler the server still stops on SIGTERM or by being killed.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Loads the players, binds, prints the address and serves until Ctrl-C or SIGTERM.
pub fn run(config: ServeConfig) -> anyhow::Result<()> {
    let roster = Roster::load(&config.ais, &config.analysis)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .with_context(|| format!("cannot listen on {}", config.addr))?;
        let local = listener.local_addr().context("the bound address")?;
        println!("oware serve: listening on http://{local}/");
        for (i, a) in roster.ais.iter().enumerate() {
            println!("  AI {i}: {} ({})", a.label, a.spec);
        }
        if !local.ip().is_loopback() {
            println!("  note: reachable from other machines at this address (not only localhost)");
        }
        let idle = config.idle;
        let hub = Arc::new(Hub::new(config, roster));
        let sweeper = hub.clone();
        tokio::spawn(async move {
            let every = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
            let mut ticker = tokio::time::interval(every);
            loop {
                ticker.tick().await;
                sweeper.sweep(Instant::now());
            }
        });
        axum::serve(
            listener,
            router(hub).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("serving")
    })
}
