-- The entry point when engines are reached by more than one cluster or
-- Service. Besides what route.lua names, the renderer binds
-- service_authority_suffix (".<namespace>.svc.<domain>:<port>"),
-- default_upstream_cluster (the cluster of engines without a route) and
-- engine_routes (engine name -> {service =, cluster =}: the engines reached
-- by another Service or protocol, during a switch between plain and TLS).
--
-- The router takes the cluster from x-firebolt-upstream, so every request
-- let through leaves with it set here, whatever the client sent: a client
-- can never choose a cluster.
function envoy_on_request(handle)
  local headers = handle:headers()
  local path = headers:get(":path") or ""
  local from_query, stripped, problem = take_engine_parameter(path)
  if problem ~= nil then
    return reject(handle, problem)
  end

  local engine = from_query
  local from_header = headers:get("x-firebolt-engine")
  if from_header ~= nil then
    if not is_dns_label(from_header) then
      return reject(handle, "invalid X-Firebolt-Engine header")
    end
    if from_query ~= nil and from_query ~= from_header then
      return reject(handle, "conflicting engine selectors")
    end
    engine = from_header
  end
  if not is_dns_label(engine) then
    return reject(handle, "invalid or missing engine selector")
  end

  if from_query ~= nil then
    headers:replace(":path", stripped)
  end
  headers:replace("x-firebolt-engine", engine)
  local route = engine_routes[engine]
  if route == nil then
    headers:replace(":authority", engine .. engine_authority_suffix)
    headers:replace("x-firebolt-upstream", default_upstream_cluster)
  else
    headers:replace(":authority", route.service .. service_authority_suffix)
    headers:replace("x-firebolt-upstream", route.cluster)
  end
  wait_for_engine(handle, engine)
end
