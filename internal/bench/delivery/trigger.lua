-- wrk script: bulk triggers of 20 e-mails, each with its own number (its
-- subject), to 1,000 subscribers created before the run.
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
  local events = {}
  for i = 1, 20 do
    n = n + 1
    events[i] = string.format('{"name":"receipt","to":"sub-%d","payload":{"n":"%d-%d","order":"A-%d","items":[1,2,3]}}', math.random(1000), tid, n, n)
  end
  return wrk.format(nil, nil, nil, '{"events":[' .. table.concat(events, ",") .. ']}')
end
