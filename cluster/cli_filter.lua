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
batch script, else the first path (a word with a "/") after srun, mpirun or
mpiexec in it; for srun and salloc outside a job, the command they run.

A submission never fails here: no answer, an unknown application or no
period class leaves the job as it was.
]]

local DEFAULT_URL = "http://127.0.0.1:8420"
local LAUNCHERS = { srun = true, mpirun = true, mpiexec = true }

local function quoted(word)
    return "'" .. tostring(word):gsub("'", "'\\''") .. "'"
end

-- A file's first line ("l") or whole text ("a"); nil when it cannot be read.
local function read_file(path, what)
    local file = path and io.open(path, "r")
    if not file then
        return nil
    end
    local text = file:read(what)
    file:close()
    return text
end

-- The executable of a batch script: its #MOSAIC directive, else its first launched path.
local function script_application(path)
    local script = read_file(path, "a")
    if not script then
        return nil
    end
    local found
    for line in script:gmatch("[^\n]+") do
        found = line:match("^#MOSAIC%s+app=(%S+)")
        if found then
            break
        end
        local words = {}
        for word in line:gmatch("%S+") do
            words[#words + 1] = word
        end
        if LAUNCHERS[words[1]] then
            for i = 2, #words do
                if words[i]:sub(1, 1) ~= "-" and words[i]:find("/", 1, true) then
                    found = words[i]
                    break
                end
            end
            if found then
                break
            end
        end
    end
    return found
end

local function application(options)
    local named = os.getenv("MOSAIC_APP")
    if named and named ~= "" then
        return named
    end
    local argv = options.argv or {}
    if options.type == "sbatch" then
        return script_application(argv[1])
    end
    return argv[1]
end

local function user_id(options)
    if options.uid and tostring(options.uid):match("^%d+$") then
        return tostring(options.uid)
    end
    local id = io.popen("id -u", "r")
    local uid = id and id:read("l")
    if id then
        id:close()
    end
    return uid
end

-- GET /v1/applications with curl; the body, or nil. The token goes on curl's
-- stdin (-H @-), never on a command line that `ps` shows.
local function lookup(uid, app)
    local url = os.getenv("MOSAIC_URL") or DEFAULT_URL
    local body_file = os.tmpname()
    local command = table.concat({
        "curl --silent --fail --max-time", quoted(os.getenv("MOSAIC_TIMEOUT") or "2"),
        "--get --data-urlencode", quoted("uid=" .. uid), "--data-urlencode", quoted("app=" .. app),
        "-H @- -o", quoted(body_file), quoted(url:gsub("/+$", "") .. "/v1/applications"),
    }, " ")
    local curl = io.popen(command, "w")
    if not curl then
        os.remove(body_file)
        return nil
    end
    local token = read_file(os.getenv("MOSAIC_TOKEN_FILE"), "l")
    curl:write(token and ("Authorization: Bearer " .. token .. "\n") or "\n")
    curl:close()
    local body = read_file(body_file, "a")
    os.remove(body_file)
    return body
end

function slurm_cli_pre_submit(options, offset)
    if options.type ~= "sbatch" and os.getenv("SLURM_JOB_ID") then
        return slurm.SUCCESS -- a step inside a job: the job already has its comment
    end
    local app, uid = application(options), user_id(options)
    if not app or not uid then
        return slurm.SUCCESS
    end
    local body = lookup(uid, app)
    -- The profile's own class: the one followed by "period_direction" (each direction has one too).
    local class = body and body:match('"period_class"%s*:%s*(%-?%d+)%s*,%s*"period_direction"')
    if class then
        local note = "mosaic_period_class=" .. class
        local comment = options.comment
        options.comment = (comment and comment ~= "") and (comment .. " " .. note) or note
        slurm.log_info("mosaic: %s has I/O period class %s", app, class)
    end
    return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early)
    return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
    return slurm.SUCCESS
end
