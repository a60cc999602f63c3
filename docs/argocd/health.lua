-- Argo CD health of the modelgateway.io kinds (Provider, ProviderKey, VirtualKey, MCPClient, Budget), read from the
-- status the operator writes: status.observedGeneration and the Ready condition (metav1.Condition).
-- Runs without Lua's standard libraries (Argo CD's default for custom checks): no string.*, no os.*.
local hs = { status = "Progressing", message = "Waiting for the operator" }

local function text(value)
  if value == nil or value == "" then
    return nil
  end
  return value
end

if obj.status == nil or obj.status.conditions == nil then
  return hs
end

local generation = nil
if obj.metadata ~= nil then
  generation = obj.metadata.generation
end
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.message = "Waiting for the operator to observe generation " .. generation
  return hs
end

local ready = nil
for _, condition in ipairs(obj.status.conditions) do
  if condition.type == "Ready" then
    ready = condition
    break
  end
end
if ready == nil then
  return hs
end
-- A condition written for an older generation says nothing about the current spec.
if generation ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration < generation then
  hs.message = "Waiting for the operator to observe generation " .. generation
  return hs
end

if ready.status == "True" then
  hs.status = "Healthy"
  hs.message = text(ready.message) or "Ready"
  return hs
end
if ready.status == "False" then
  if ready.reason == "Reconciling" or ready.reason == "Deleting" then
    if text(ready.message) ~= nil then
      hs.message = "Waiting for the operator: " .. ready.message
    end
    return hs
  end
  -- An MCPClient whose gateway pods are still connecting becomes Ready by itself.
  if ready.reason == "Connecting" then
    hs.message = text(ready.message) or "Connecting"
    return hs
  end
  -- An MCPClient waiting for an admin to authorize it (status.authorizeUrl): nothing is wrong, a person must act.
  if ready.reason == "AuthorizationPending" then
    hs.status = "Suspended"
    hs.message = text(ready.message) or "Waiting for authorization"
    return hs
  end
  hs.status = "Degraded"
  hs.message = text(ready.message) or text(ready.reason) or "Not ready"
  return hs
end
-- Ready=Unknown: the operator has not decided yet.
return hs
