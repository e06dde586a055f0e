-- cluster/cli_filter.lua's slurm_cli_pre_submit under a stand-alone interpreter, given what
-- Slurm's cli_filter/lua plugin gives it: the `slurm` table (SUCCESS, log_info) and the
-- options (type, uid, comment, argv, time_limit from $HARNESS_TIME_LIMIT). Arguments: FILTER TYPE UID COMMENT ARGV...
-- ("" for no uid or comment). Prints the return code, then the comment ("nil" for none);
-- log lines go to stderr. Written for Lua 5.1 like the filter.
slurm = { SUCCESS = 0, ERROR = -1 }
function slurm.log_info(fmt, ...)
    io.stderr:write(string.format(fmt, ...), "\n")
end
slurm.log_error = slurm.log_info
dofile(arg[1])
local options = { type = arg[2], argv = {} }
if arg[3] ~= "" then
    options.uid = arg[3]
end
options.time_limit = os.getenv("HARNESS_TIME_LIMIT") -- sbatch --time, as Slurm gives it
if arg[4] ~= "" then
    options.comment = arg[4]
end
for i = 5, #arg do
    options.argv[#options.argv + 1] = arg[i]
end
local code = slurm_cli_pre_submit(options, 0)
io.write(tostring(code), "\n", tostring(options.comment), "\n")
