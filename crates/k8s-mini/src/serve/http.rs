//! The HTTP side (axum on a tokio runtime): every request is read whole (up to the body limit,
//! else 413), handed to the driver thread, and answered with what it says; a watch streams the
//! driver's JSON lines as a chunked body until the client leaves or `timeoutSeconds` passes.

use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::serve::driver::{Answer, Msg};
use crate::serve::reply::{self, Reply};
use crate::serve::rest::Request;

/// What every handler shares.
pub(crate) struct Shared {
    pub(crate) to_driver: std::sync::Mutex<Sender<Msg>>,
    pub(crate) max_body: usize,
}

fn respond(r: Reply) -> Response {
    let code = StatusCode::from_u16(r.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (code, [(header::CONTENT_TYPE, r.content_type)], r.body).into_response()
}

fn header_str(h: &HeaderMap, name: header::HeaderName) -> String {
    header_text(h.get(name))
}

/// A header's value as the driver sees it: its text, or empty when it is absent or not visible
/// ASCII.
pub(crate) fn header_text(v: Option<&axum::http::HeaderValue>) -> String {
    v.and_then(|v| v.to_str().ok()).unwrap_or("").to_string()
}

/// The query string split into decoded `name=value` pairs, in order (`application/x-www-form-urlencoded`
/// decoding, as Go's `url.ParseQuery`; repeated names kept).
pub(crate) fn split_query(q: Option<&str>) -> Vec<(String, String)> {
    q.map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

fn unavailable() -> Response {
    respond(Reply::json(
        503,
        &serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the cluster is shutting down", "reason": "ServiceUnavailable", "code": 503}),
    ))
}

/// The one handler: every path goes to the driver.
pub(crate) async fn handle(State(st): State<Arc<Shared>>, req: axum::extract::Request) -> Response {
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    // Far too large: answer at once (the client may see the connection close while it writes).
    if declared.is_some_and(|n| n > DISCARD_LIMIT) {
        return respond(reply::too_large(st.max_body));
    }
    let Some(bytes) = read_body(body, st.max_body).await else {
        return respond(reply::too_large(st.max_body));
    };
    let query = split_query(parts.uri.query());
    let request = Request {
        method: parts.method.as_str().to_string(),
        path: parts.uri.path().to_string(),
        query,
        accept: header_str(&parts.headers, header::ACCEPT),
        content_type: header_str(&parts.headers, header::CONTENT_TYPE),
        body: bytes.to_vec(),
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let sent = st
        .to_driver
        .lock()
        .map(|s| s.send(Msg::Request(request, tx)).is_ok())
        .unwrap_or(false);
    if !sent {
        return unavailable();
    }
    match rx.await {
        Ok(Answer::Reply(r)) => respond(r),
        Ok(Answer::Watch { rx, timeout }) => stream(rx, timeout),
        Err(_) => unavailable(),
    }
}

/// Bodies up to this size are read to the end even when over the limit, so that the client gets
/// its 413 instead of a connection closed while it writes.
const DISCARD_LIMIT: usize = 16 * 1024 * 1024;

/// The body, or `None` when it is over `limit` (or the connection failed while reading it).
async fn read_body(body: Body, limit: usize) -> Option<Vec<u8>> {
    use tokio_stream::StreamExt;
    let mut data = body.into_data_stream();
    let (mut buf, mut total) = (Vec::new(), 0usize);
    while let Some(chunk) = data.next().await {
        let chunk = chunk.ok()?;
        total = total.saturating_add(chunk.len());
        if total <= limit {
            buf.extend_from_slice(&chunk);
        } else if total > DISCARD_LIMIT {
            return None;
        }
    }
    (total <= limit).then_some(buf)
}

fn stream(mut rx: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>, timeout: Duration) -> Response {
    let (btx, brx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(64);
    tokio::spawn(async move {
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                () = &mut deadline => break,
                m = rx.recv() => match m {
                    Some(line) => if btx.send(Ok(line)).await.is_err() { break },
                    None => break,
                },
            }
        }
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(brx));
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, reply::JSON.to_string())],
        body,
    )
        .into_response()
}
