-- wrk script for bench/register.sh: every request registers a new device, as an app would
-- (POST /v1/installations with the client key), with a unique 64-hex APNs token: 48 hex of this
-- run's random prefix, 8 of the wrk thread, 8 of the thread's request counter.
-- Usage: wrk -s bench/register.lua URL -- CLIENT_KEY
-- Prints one line at the end: "register: sent=… created=… updated=… other=…" (other: any status
-- but 201 and 200; sent − the three: requests still unanswered when wrk stopped).
local threads = {}

function setup(thread)
    thread:set("id", #threads + 1)
    table.insert(threads, thread)
end

function init(args)
    math.randomseed(os.time() + id * 7919)
    local parts = {}
    for i = 1, 6 do parts[i] = string.format("%08x", math.random(0, 0x7fffffff)) end
    prefix = table.concat(parts)
    headers = { ["Authorization"] = "Bearer " .. args[1], ["Content-Type"] = "application/json" }
    sent, created, updated, other = 0, 0, 0, 0
end

function request()
    sent = sent + 1
    local token = string.format("%s%08x%08x", prefix, id, sent)
    local body = '{"platform":"ios","token":"' .. token .. '","user_id":"bench-' .. id .. '-' .. sent .. '"}'
    return wrk.format("POST", "/v1/installations", headers, body)
end

function response(status, headers, body)
    if status == 201 then
        created = created + 1
    elseif status == 200 then
        updated = updated + 1
    else
        other = other + 1
        if other <= 3 then io.stderr:write("unexpected " .. status .. ": " .. body .. "\n") end
    end
end

function done(summary, latency, requests)
    local s, c, u, o = 0, 0, 0, 0
    for _, thread in ipairs(threads) do
        s = s + thread:get("sent")
        c = c + thread:get("created")
        u = u + thread:get("updated")
        o = o + thread:get("other")
    end
    io.write(string.format("register: sent=%d created=%d updated=%d other=%d\n", s, c, u, o))
end
