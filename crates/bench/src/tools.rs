//! Finding the tool to call: `tools/list`, polled until it is listed.

use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use serde::Deserialize;

use crate::caller::Caller;

/// Polls `tools/list` every 20 ms (up to `wait`) until a tool named `name`,
/// or ending in `__name`, is listed; returns the name as listed (an exact
/// match is preferred).
pub async fn wait_for_tool(caller: &mut impl Caller, name: &str, wait: Duration) -> anyhow::Result<String> {
    let deadline = Instant::now() + wait;
    let suffix = format!("__{name}");
    loop {
        let names = list_tools(caller).await?;
        if names.iter().any(|n| n == name) {
            return Ok(name.to_owned());
        }
        if let Some(found) = names.iter().find(|n| n.ends_with(&suffix)) {
            return Ok(found.clone());
        }
        if Instant::now() >= deadline {
            bail!("no tool named {name} or *{suffix} listed after {wait:?}; tools: [{}]", names.join(", "));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// All tool names, following `nextCursor` pagination.
async fn list_tools(caller: &mut impl Caller) -> anyhow::Result<Vec<String>> {
    #[derive(Deserialize)]
    struct Tool {
        name: String,
    }
    #[derive(Deserialize)]
    struct ListResult {
        #[serde(default)]
        tools: Vec<Tool>,
        #[serde(default, rename = "nextCursor")]
        next_cursor: Option<String>,
    }
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => serde_json::json!({ "cursor": c }),
            None => serde_json::json!({}),
        };
        let params = serde_json::value::to_raw_value(&params)?;
        let raw = caller
            .request("tools/list", &params)
            .await?
            .outcome
            .map_err(|e| anyhow!("tools/list returned an error: {e}"))?;
        let page: ListResult = serde_json::from_str(raw.get()).context("tools/list result is not a tool list")?;
        names.extend(page.tools.into_iter().map(|t| t.name));
        match page.next_cursor {
            Some(c) if !c.is_empty() && cursor.as_deref() != Some(c.as_str()) => {
                cursor = Some(c);
            }
            _ => return Ok(names),
        }
    }
}
