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
  headers:replace(":authority", engine .. engine_authority_suffix)
  wait_for_engine(handle, engine)
end
