-- Picks the engine a query is for and pins the request to that engine's
-- Service. Runs in Envoy's Lua filter, after the health_check filter (so the
-- gateway's own /healthz never gets here) and before the dynamic forward
-- proxy, which resolves whatever :authority this script leaves behind.
--
-- The renderer prepends lines that define engine_authority_suffix, the
-- instance-specific "-service.<namespace>.svc.<domain>:<port>" tail,
-- wake_agent_cluster (the wake agent's cluster, nil when the gateway runs
-- none) and wake_hold_timeout_ms. Every request that is not rejected leaves
-- with its :authority rewritten to an engine Service, so the proxy can never
-- be pointed at an arbitrary host.

local max_label_length = 63

-- An engine name must be a DNS-1123 label: it becomes the first label of a
-- host name, so a dot would let a caller reach another namespace and any
-- other character could smuggle a port or path into :authority.
local function is_dns_label(name)
  if name == nil or #name == 0 or #name > max_label_length then
    return false
  end
  if not string.find(name, "^[a-z0-9][a-z0-9%-]*$") then
    return false
  end
  return string.sub(name, -1) ~= "-"
end

-- Decodes percent escapes; nil when one is malformed, so a garbled selector is
-- reported rather than guessed at. "+" is left alone: neither it nor the space
-- it would stand for can occur in an engine name or in the key "engine", so
-- decoding it could not change any outcome.
local function unescape(text)
  local out = {}
  local i = 1
  while i <= #text do
    local c = string.sub(text, i, i)
    if c == "%" then
      local hex = string.sub(text, i + 1, i + 2)
      if not string.find(hex, "^%x%x$") then
        return nil
      end
      out[#out + 1] = string.char(tonumber(hex, 16))
      i = i + 3
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

-- Returns the decoded engine= value (nil when absent), the path with that
-- parameter removed, and an error text. Every other parameter is kept byte
-- for byte: the engine treats query parameters as settings, and it does not
-- know the routing-only engine setting.
local function take_engine_parameter(path)
  local mark = string.find(path, "?", 1, true)
  if mark == nil then
    return nil, path, nil
  end
  local engine = nil
  local kept = {}
  for field in string.gmatch(string.sub(path, mark + 1) .. "&", "([^&]*)&") do
    local key, value = string.match(field, "^([^=]*)=(.*)$")
    if key == nil then
      key, value = field, ""
    end
    if unescape(key) == "engine" then
      if engine ~= nil then
        return nil, path, "multiple engine query parameters"
      end
      engine = unescape(value)
      if engine == nil then
        return nil, path, "invalid engine query parameter encoding"
      end
    else
      kept[#kept + 1] = field
    end
  end
  if engine == nil then
    return nil, path, nil
  end
  local base = string.sub(path, 1, mark - 1)
  local rest = table.concat(kept, "&")
  if rest == "" then
    return engine, base, nil
  end
  return engine, base .. "?" .. rest, nil
end

local function reject(handle, reason)
  handle:respond({[":status"] = "400"}, reason)
end

-- Asks the wake agent about the engine, as the last step: the agent answers
-- at once when the engine has a ready endpoint, and otherwise stamps demand
-- and holds the call until the engine is ready or its hold times out. Only
-- an answer that carries the agent's decision header can stop the request;
-- Envoy's own reply when the agent is unreachable has none, so a broken
-- agent never takes the gateway down with it (fail open).
local function wait_for_engine(handle, engine)
  if wake_agent_cluster == nil then
    return
  end
  local reply = handle:httpCall(wake_agent_cluster, {
    [":method"] = "GET",
    [":path"] = "/hold?engine=" .. engine,
    [":authority"] = "wake-agent",
  }, "", wake_hold_timeout_ms)
  if reply == nil or reply[":status"] == "200" or reply["x-firebolt-wake-decision"] == nil then
    return
  end
  local retry = reply["retry-after"]
  if retry == nil or not string.find(retry, "^%d+$") or #retry > 4 then
    retry = "10"
  end
  handle:respond({[":status"] = "503", ["retry-after"] = retry,
    ["x-firebolt-wake-decision"] = reply["x-firebolt-wake-decision"]},
    "engine is not available; retry shortly")
end
