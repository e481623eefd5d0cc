-- wrk script: one-step in-app triggers to 1,000 subscribers
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "ApiKey " .. os.getenv("KEY")
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"name":"shipped","to":"sub-%d","payload":{"order":"A-%d","items":[1,2,3],"when":"2026-11-23T10:00:00Z"}}', math.random(1000), n)
  return wrk.format(nil, nil, nil, body)
end
