--[[
Example Slurm cli_filter: at submission, ask `mosaic serve` for the profile of
the application the job is about to run, and put its I/O period class in the
job's comment: "mosaic_period_class=K" means the application's I/O phases
recur every 10^K to 10^(K+1) seconds in most of its stored runs (IO-Sets'
Set-10 idea: jobs whose characteristic times share a power of ten share I/O
bandwidth alike). A site's job_submit plugin, a scheduler or an accounting
query then reads it from the comment (`squeue -o %k`, sacct's Comment).

Why cli_filter and not job_submit: job_submit runs inside slurmctld while it
holds its locks, so a network call there delays every submission of the
cluster; cli_filter runs in the user's own sbatch/salloc/srun on the login
node, before slurmctld is contacted. (A user can bypass it: fine for a hint,
not for a policy.)

Install: `CliFilterPlugins=cli_filter/lua` in slurm.conf and this file as
cli_filter.lua in Slurm's configuration directory. Settings, from the
submitting user's environment (e.g. /etc/profile.d/mosaic.sh):
  MOSAIC_URL         base URL of the service                [http://127.0.0.1:8420]
  MOSAIC_TOKEN_FILE  read token file (users can read it: start the service with a
                     separate --write-token-file for the epilog)
  MOSAIC_TIMEOUT     seconds allowed for the lookup                          [2]
  MOSAIC_APP         the executable the job runs, as its Darshan logs name it
The application, when MOSAIC_APP is not set: a "#MOSAIC app=PATH" line in the
batch script, else what its first srun, mpirun or mpiexec line runs (past the
launcher's options, environment assignments and env/time/exec; a wrapper
script is read in turn); for srun and salloc outside a job, what they run.
cluster/README.md says what it cannot see.

Written for Lua 5.1 (Slurm's lua plugins link it on Debian and most sites),
and runs under 5.2, 5.3, 5.4 and LuaJIT alike: no integer division, goto or
utf8, and read formats with their "*" ("*l", "*a").

The application found also goes in the comment, as "mosaic_app=PATH" (PATH
percent-encoded: one word), for the prolog (cluster/slurm-prolog.sh, run by
slurmctld, which never sees the batch script) to tell `mosaic serve` what the job
runs; a mosaic_app= word the user wrote is replaced by the filter's.

Who slows whom (docs/method.md 3.11): "mosaic_io_sensitive=1" when the
application's I/O time follows the file system's load (label sensitive), and
"mosaic_io_aggressor=n1,metadata" with its aggressor traits (n1, metadata,
bandwidth, small_requests), from the same answer: no second request, so the
one MOSAIC_TIMEOUT bounds all of it.

With the profile, the filter asks /v1/forecast (both requests side by side,
within MOSAIC_TIMEOUT) and adds "mosaic_io_conflict=low|medium|high": the
risk that the job, started now, meets or causes contention on a shared file
system (docs/method.md 3.13). The job's time limit (--time) is passed along.

A submission never fails here: no answer, an unknown application, no period
class or no risk class leaves the job as it was but for its mosaic_app= word.
]]

local DEFAULT_URL = "http://127.0.0.1:8420"
local MAX_SCRIPT_BYTES = 1048576 -- a batch script or wrapper read further is not one
local MAX_WRAPPERS = 3 -- wrapper scripts followed, one inside the other

-- The launchers, each with its options that take a separate value (how many words):
-- the application is the first word after them that is none of these.
local MPI = {
    ["-n"] = 1, ["-np"] = 1, ["-c"] = 1, ["-N"] = 1, ["-ppn"] = 1, ["--npernode"] = 1,
    ["-x"] = 1, ["-genv"] = 2, ["-env"] = 2, ["-genvlist"] = 1, ["-envlist"] = 1,
    ["--mca"] = 2, ["-mca"] = 2, ["--gmca"] = 2, ["-gmca"] = 2,
    ["-H"] = 1, ["-host"] = 1, ["--host"] = 1, ["-hosts"] = 1, ["-f"] = 1, ["-hostfile"] = 1,
    ["--hostfile"] = 1, ["-machinefile"] = 1, ["--machinefile"] = 1, ["-wdir"] = 1, ["--wdir"] = 1,
    ["-wd"] = 1, ["--prefix"] = 1, ["--map-by"] = 1, ["--bind-to"] = 1, ["-bind-to"] = 1,
    ["--rank-by"] = 1, ["-launcher"] = 1, ["-bootstrap"] = 1,
}
local LAUNCHERS = {
    srun = {
        ["-n"] = 1, ["-N"] = 1, ["-c"] = 1, ["-p"] = 1, ["-A"] = 1, ["-t"] = 1, ["-J"] = 1,
        ["-w"] = 1, ["-x"] = 1, ["-D"] = 1, ["-o"] = 1, ["-e"] = 1, ["-i"] = 1, ["-C"] = 1,
        ["-m"] = 1, ["-r"] = 1, ["-G"] = 1, ["--ntasks"] = 1, ["--nodes"] = 1,
        ["--cpus-per-task"] = 1, ["--partition"] = 1, ["--account"] = 1, ["--time"] = 1,
        ["--job-name"] = 1, ["--nodelist"] = 1, ["--exclude"] = 1, ["--chdir"] = 1,
        ["--output"] = 1, ["--error"] = 1, ["--input"] = 1, ["--export"] = 1, ["--mpi"] = 1,
        ["--constraint"] = 1, ["--distribution"] = 1, ["--mem"] = 1, ["--gres"] = 1,
        ["--cpu-bind"] = 1, ["--ntasks-per-node"] = 1,
    },
    mpirun = MPI, mpiexec = MPI, ["mpiexec.hydra"] = MPI, orterun = MPI,
    env = { ["-u"] = 1, ["--unset"] = 1, ["-C"] = 1, ["--chdir"] = 1, ["-S"] = 1 },
    exec = { ["-a"] = 1 },
    time = { ["-o"] = 1, ["-f"] = 1, ["--output"] = 1, ["--format"] = 1 },
    nohup = {},
}
local MPI_LAUNCHERS = { srun = true, mpirun = true, mpiexec = true, ["mpiexec.hydra"] = true, orterun = true }

local function quoted(word)
    return "'" .. tostring(word):gsub("'", "'\\''") .. "'"
end

-- A file's first line ("*l"), whole text ("*a") or first bytes (a number); nil when it
-- cannot be read.
local function read_file(path, what)
    local file = path and io.open(path, "r")
    if not file then
        return nil
    end
    local text = file:read(what)
    file:close()
    return text
end

local function words_of(line)
    local words = {}
    for word in line:gmatch("%S+") do
        words[#words + 1] = word
    end
    return words
end

local function is_assignment(word)
    return word:match("^[%a_][%w_]*=") ~= nil
end

-- What the command in words[first...] runs, through its launchers; and whether an MPI
-- launcher (srun, mpirun, mpiexec) was among them.
local function launched(words, first, through_mpi)
    local i = first
    while words[i] and is_assignment(words[i]) do
        i = i + 1
    end
    local command = words[i]
    local name = command and command:match("([^/]+)$")
    local options = name and LAUNCHERS[name]
    if not options then
        return command, through_mpi
    end
    i = i + 1
    local unknown = false -- the word before is an option of unknown arity
    while words[i] do
        local word = words[i]
        if word == "--" then
            i = i + 1
            break
        elseif is_assignment(word) then
            i = i + 1
        elseif word:sub(1, 1) == "-" then
            local takes = (not word:find("=", 1, true)) and options[word] or 0
            unknown = takes == 0 and not word:find("=", 1, true) and options[word] == nil
            i = i + 1 + takes
        else
            -- "-bind-to core /app": an option not listed took a value; a path is the application.
            if unknown and not word:find("/", 1, true) and words[i + 1] and words[i + 1]:find("/", 1, true) then
                i = i + 1
            end
            break
        end
    end
    return launched(words, i, through_mpi or MPI_LAUNCHERS[name] ~= nil)
end

local script_application

-- A wrapper script (a file starting with "#!") stands for what it runs.
local function unwrapped(app, depth)
    if not app or depth >= MAX_WRAPPERS or read_file(app, 2) ~= "#!" then
        return app
    end
    return script_application(app, depth + 1) or app
end

-- The executable of a script: its #MOSAIC directive, else what its first srun/mpirun/mpiexec
-- line runs; in a wrapper (depth > 0) else what its last command given as a path (/..., ./...)
-- runs.
script_application = function(path, depth)
    local script = read_file(path, MAX_SCRIPT_BYTES)
    if not script then
        return nil
    end
    local last_path
    for line in script:gmatch("[^\n]+") do
        local named = line:match("^%s*#MOSAIC%s+app=(%S+)")
        if named then
            return named
        end
        local words = words_of(line)
        if words[1] and words[1]:sub(1, 1) ~= "#" then
            local app, through_mpi = launched(words, 1, false)
            if app and through_mpi then
                return unwrapped(app, depth)
            elseif app and depth > 0 and app:match("^%.?%.?/") then
                last_path = app
            end
        end
    end
    return last_path and unwrapped(last_path, depth)
end

local function application(options)
    local named = os.getenv("MOSAIC_APP")
    if named and named ~= "" then
        return named
    end
    local argv = options.argv or {}
    if options.type == "sbatch" then
        return script_application(argv[1], 0)
    end
    local words = {}
    for i = 1, #argv do
        words[i] = argv[i]
    end
    return unwrapped((launched(words, 1, true)), 0)
end

local function user_id(options)
    if options.uid and tostring(options.uid):match("^%d+$") then
        return tostring(options.uid)
    end
    local id = io.popen("id -u", "r")
    local uid = id and id:read("*l")
    if id then
        id:close()
    end
    return uid
end

-- Slurm's time limit ("minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
-- "days-hours:minutes", "days-hours:minutes:seconds") in seconds; nil for none or UNLIMITED.
local function limit_seconds(limit)
    local text = limit and tostring(limit)
    if not text or not text:match("^[%d:-]+$") then
        return nil
    end
    local days, rest = text:match("^(%d+)-(.*)$")
    local parts = {}
    for part in (rest or text):gmatch("[^:]+") do
        parts[#parts + 1] = tonumber(part)
    end
    local d, h, m, sec = tonumber(days) or 0, 0, 0, 0
    if days then
        h, m, sec = parts[1] or 0, parts[2] or 0, parts[3] or 0
    elseif #parts == 1 then
        m = parts[1]
    elseif #parts == 2 then
        m, sec = parts[1], parts[2]
    elseif #parts == 3 then
        h, m, sec = parts[1], parts[2], parts[3]
    else
        return nil
    end
    local total = ((d * 24 + h) * 60 + m) * 60 + sec
    return total > 0 and total or nil
end

-- GET /v1/applications (the profile) and /v1/forecast (the conflict risk) with two curls
-- started side by side by one shell, each within MOSAIC_TIMEOUT: the submission waits for
-- the slower, never for both in turn. The bodies, or nil for each. The token goes on the
-- shell's stdin, read once and handed to each curl's stdin (-H @-) by printf, a builtin: never
-- on a command line that `ps` shows.
local function lookup(uid, app, limit)
    local url = (os.getenv("MOSAIC_URL") or DEFAULT_URL):gsub("/+$", "")
    local timeout = quoted(os.getenv("MOSAIC_TIMEOUT") or "2")
    local files = { os.tmpname(), os.tmpname() }
    local function curl(path, file, extra)
        return table.concat({
            "curl --silent --fail --max-time", timeout, "--get --data-urlencode", quoted("uid=" .. uid),
            "--data-urlencode", quoted("app=" .. app), extra, "-H @- -o", quoted(file), quoted(url .. path),
        }, " ")
    end
    local seconds = limit_seconds(limit)
    local limit_option = seconds and ("--data-urlencode " .. quoted("time_limit=" .. seconds)) or ""
    local forecast = curl("/v1/forecast", files[2], limit_option)
    local command = "IFS= read -r h; printf '%s\\n' \"$h\" | " .. curl("/v1/applications", files[1], "")
        .. " & printf '%s\\n' \"$h\" | " .. forecast .. "; wait"
    local shell = io.popen(command, "w")
    if not shell then
        os.remove(files[1])
        os.remove(files[2])
        return nil, nil
    end
    local token = read_file(os.getenv("MOSAIC_TOKEN_FILE"), "*l")
    shell:write(token and ("Authorization: Bearer " .. token .. "\n") or "\n")
    shell:close()
    local profile, risk = read_file(files[1], "*a"), read_file(files[2], "*a")
    os.remove(files[1])
    os.remove(files[2])
    return profile, risk
end

-- The application as the job's comment carries it to PrologSlurmctld (cluster/slurm-prolog.sh):
-- every byte but A-Z a-z 0-9 / . _ ~ - percent-encoded, so that a path with spaces, quotes,
-- "=", "%" or "+" stays one word the prolog passes on as it is (the service decodes it).
local function encoded(text)
    return (text:gsub("[^A-Za-z0-9/._~%-]", function(c)
        return string.format("%%%02X", c:byte())
    end))
end

-- The comment without a mosaic_app= word a user wrote: the filter's own is the one kept.
local function without_application(comment)
    local kept = {}
    for word in (comment or ""):gmatch("%S+") do
        if not word:match("^mosaic_app=") then
            kept[#kept + 1] = word
        end
    end
    return table.concat(kept, " ")
end

-- The answer's "contention" object (who slows whom): whether the application is sensitive
-- to the file system's load, and its aggressor traits joined by commas (nil when none).
-- The object holds no nested braces; a trait is a bare word.
local function contention(body)
    local object = body and body:match('"contention"%s*:%s*(%b{})')
    if not object then
        return false, nil
    end
    local sensitive = object:match('"label"%s*:%s*"sensitive"') ~= nil
    local list = object:match('"traits"%s*:%s*(%b[])')
    local traits = {}
    for trait in (list or ""):gmatch('"([%w_]+)"') do
        traits[#traits + 1] = trait
    end
    return sensitive, (#traits > 0) and table.concat(traits, ",") or nil
end

function slurm_cli_pre_submit(options, offset)
    if options.type ~= "sbatch" and os.getenv("SLURM_JOB_ID") then
        return slurm.SUCCESS -- a step inside a job: the job already has its comment
    end
    local app, uid = application(options), user_id(options)
    if not app or not uid then
        return slurm.SUCCESS
    end
    local body, forecast = lookup(uid, app, options.time_limit)
    -- The profile's own class: the one followed by "period_direction" (each direction has one too).
    local class = body and body:match('"period_class"%s*:%s*(%-?%d+)%s*,%s*"period_direction"')
    local notes = {}
    if class then
        notes[#notes + 1] = "mosaic_period_class=" .. class
        slurm.log_info("mosaic: %s has I/O period class %s", app, class)
    end
    local sensitive, traits = contention(body)
    if sensitive then
        notes[#notes + 1] = "mosaic_io_sensitive=1"
        slurm.log_info("mosaic: %s is sensitive to the file system's load", app)
    end
    if traits then
        notes[#notes + 1] = "mosaic_io_aggressor=" .. traits
        slurm.log_info("mosaic: %s has aggressor traits %s", app, traits)
    end
    -- The forecast's risk class; none (null: an unknown application, no signature) adds nothing.
    local risk = forecast and forecast:match('"risk"%s*:%s*{%s*"class"%s*:%s*"(%a+)"')
    if risk == "low" or risk == "medium" or risk == "high" then
        notes[#notes + 1] = "mosaic_io_conflict=" .. risk
        slurm.log_info("mosaic: %s has I/O conflict risk %s", app, risk)
    end
    notes[#notes + 1] = "mosaic_app=" .. encoded(app)
    local comment = without_application(options.comment)
    options.comment = (comment ~= "" and (comment .. " ") or "") .. table.concat(notes, " ")
    return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early)
    return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
    return slurm.SUCCESS
end
