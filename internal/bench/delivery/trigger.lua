-- wrk script: one e-mail per trigger, each with its own number (its subject),
-- to one of 1,000 subscribers upserted by the trigger itself.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "ApiKey " .. os.getenv("KEY")
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local n = 0
request = function()
  n = n + 1
  local s = math.random(1000)
  local body = string.format('{"name":"receipt","to":{"subscriberId":"sub-%d","email":"sub-%d@bench.test","firstName":"S%d"},"payload":{"n":"%d-%d","order":"A-%d","items":[1,2,3]}}', s, s, s, tid, n, n)
  return wrk.format(nil, nil, nil, body)
end
