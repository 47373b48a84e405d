-- Shared by the scenarios: set-up, a JSON result file, a watchdog, scripted UI answers.
-- Environment (set by tests/editors/conftest.py): OUT_JSON, TETHER_CMD, TETHER_TEST_SCRIPT,
-- WORKSPACE, WATCHDOG_MS.
-- No module may create a global: assigning one is an error.
setmetatable(_G, {
  __newindex = function(_, name)
    error('global variable assigned: ' .. tostring(name), 2)
  end,
})

local H = { result = { progress = {}, inputs = {}, selects = {}, approvals = {} } }
if vim.env.DEBUG_LSP == '1' then
  vim.lsp.set_log_level('debug')
end

--- Answers the next vim.ui.input / vim.ui.select calls (FIFO); nil cancels.
H.input_answers = {}
H.select_answers = {}

vim.ui.input = function(opts, on_confirm)
  table.insert(H.result.inputs, opts.prompt)
  H.result.input_defaults = H.result.input_defaults or {}
  table.insert(H.result.input_defaults, opts.default or vim.NIL)
  local answer = table.remove(H.input_answers, 1)
  if answer == '<default>' then -- the user accepts what the input offered
    answer = opts.default
  end
  on_confirm(answer)
end
vim.ui.select = function(items, opts, on_choice)
  local labels = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(H.result.selects, { prompt = opts.prompt, items = labels })
  local index = table.remove(H.select_answers, 1)
  on_choice(index and items[index] or nil, index)
end

--- Keeps every `vim.notify` message in `H.result.notes` (and still shows it).
function H.keep_notes()
  H.result.notes = {}
  local notify = vim.notify
  vim.notify = function(msg, ...)
    table.insert(H.result.notes, msg)
    return notify(msg, ...)
  end
end

--- Writes the result file, stops the servers (SIGTERM) and quits.
---@param tag string
function H.finish(tag)
  if H.done then
    return
  end
  H.done = true
  H.result.finish = tag
  local ok, encoded = pcall(vim.json.encode, H.result)
  if not ok then
    encoded = vim.json.encode({ finish = 'error', error = 'cannot encode result: ' .. encoded })
  end
  local file = assert(io.open(vim.env.OUT_JSON, 'w'))
  file:write(encoded)
  file:close()
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:stop(true)
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 10)
  vim.cmd('qall!')
end

--- Wraps a test step: an error ends the test with its traceback.
---@param fn function
---@return function
function H.step(fn)
  return function(...)
    local ok, err = xpcall(fn, debug.traceback, ...)
    if not ok then
      H.result.error = err
      H.finish('error')
    end
  end
end

--- Runs `fn` on a `User` autocmd (`TetherApprove`, `TetherRunFinished`).
---@param pattern string
---@param fn fun(data: table)
function H.on(pattern, fn)
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = H.step(function(args)
      fn(args.data)
    end),
  })
end

--- Types keys as the user would (mappings apply).
---@param keys string
function H.feed(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
end

--- The setup call of the tests (the venv's `tether serve`, the scripted model).
---@param opts? table merged into the options
function H.setup(opts)
  local cmd = { vim.env.TETHER_CMD, 'serve' }
  if vim.env.TETHER_PROXY then -- the wire recorded (tests/editors/lsp_proxy.py)
    cmd = { vim.env.TETHER_PYTHON, vim.env.TETHER_PROXY, vim.env.TETHER_PROXY_LOG, unpack(cmd) }
  end
  local base = {
    cmd = cmd,
    settings = { provider = 'scripted', script = vim.env.TETHER_TEST_SCRIPT },
  }
  require('tether').setup(vim.tbl_deep_extend('force', base, opts or {}))
end

--- What a finished run left: result, error, events, the params sent.
---@param data table the TetherRunFinished data
function H.capture(data)
  local run = require('tether.commands').get_run(data.runId)
  return { result = data.result, error = data.error, events = run.events, params = run.params }
end

--- Runs `fn` later, as a user acting after a redraw would.
function H.later(fn, ms)
  vim.defer_fn(H.step(fn), ms or 0)
end

--- Runs `fn` once `cond()` holds, checking every 10 ms (the watchdog bounds the wait).
---@param cond fun(): boolean
---@param fn function
function H.when(cond, fn)
  local step = H.step(function()
    if cond() then
      fn()
    else
      H.when(cond, fn)
    end
  end)
  vim.defer_fn(step, 10)
end

--- Types keys through Neovim's input queue (`nvim_input`: the path of a user's keys).
---@param keys string
function H.input(keys)
  vim.api.nvim_input(keys)
end

--- Floating windows open now.
function H.floats()
  return vim.tbl_filter(function(win)
    return vim.api.nvim_win_get_config(win).relative ~= ''
  end, vim.api.nvim_list_wins())
end

--- Tether's approval extmarks in every buffer.
function H.approval_marks()
  local ns = require('tether.preview').ns
  local marks = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
      table.insert(marks, {
        row = m[2],
        line_hl_group = m[4].line_hl_group,
        virt_lines = m[4].virt_lines,
        above = m[4].virt_lines_above or false,
      })
    end
  end
  return marks
end

--- The keys an approval's float shows, as one line (` a allow · … `): its footer, or
--- the rows below its text when they do not fit it (preview.set_hint).
---@param view tether.View
---@return string?
function H.keys_shown(view)
  local footer = vim.api.nvim_win_get_config(view.win).footer
  if type(footer) == 'table' and footer[1] and footer[1][1] ~= '' then
    return footer[1][1]
  end
  local ns = require('tether.preview').hint_ns
  local rows = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(view.buf, ns, 0, -1, { details = true })) do
    for _, row in ipairs(m[4].virt_lines or {}) do
      if row[1] and row[1][1] ~= '' then
        table.insert(rows, row[1][1])
      end
    end
  end
  return #rows > 0 and (' ' .. table.concat(rows, ' · ') .. ' ') or nil
end

--- Lines of a buffer.
function H.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    table.insert(H.result.progress, ev.data.params)
  end,
})
H.on('TetherApprove', function(data)
  table.insert(H.result.approvals, { tool = data.tool, view = data.view.kind })
end)
vim.defer_fn(function()
  H.result.error = 'watchdog: the scenario did not finish in time'
  H.finish('watchdog')
end, tonumber(vim.env.WATCHDOG_MS or '25000'))

return H
