-- :TetherRewind after a run that edited the open src/app.py (edit_file, through the
-- buffer) and then changed README.md and deleted notes.txt (bash). Env: PICK (the
-- checkpoint item to choose, 1 = the newest), RESTORE (1 files and conversation, 2 files,
-- 3 conversation), TYPE (a line typed, unsaved, in the app buffer after the run),
-- FORCE (1: force the conflicts when asked).
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { autoApprove = { 'edit_file', 'bash' } } })
H.result.notes = {}
local notify = vim.notify
vim.notify = function(msg, ...)
  if msg:find('rewound', 1, true) then -- the rewind's, not the run's
    table.insert(H.result.notes, msg)
  end
  return notify(msg, ...)
end
vim.cmd.edit(vim.env.WORKSPACE .. '/src/app.py')
local app = vim.api.nvim_get_current_buf()
H.select_answers = { tonumber(vim.env.PICK), tonumber(vim.env.RESTORE) }
if vim.env.FORCE then
  table.insert(H.select_answers, tonumber(vim.env.FORCE))
end

local function read(path)
  local file = io.open(vim.env.WORKSPACE .. '/' .. path, 'r')
  if not file then
    return vim.NIL
  end
  local text = file:read('*a')
  file:close()
  return text
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  H.result.after_run = { app = table.concat(H.lines(app), '\n') }
  if vim.env.TYPE then
    vim.api.nvim_buf_set_lines(app, -1, -1, false, { vim.env.TYPE })
  end
  local wanted = vim.env.FORCE == '2' and 2 or 1
  vim.cmd('TetherRewind')
  H.when(function()
    return #H.result.notes >= wanted
  end, function()
    H.result.buffer = H.lines(app)
    H.result.modified = vim.bo[app].modified
    H.result.disk =
      { app = read('src/app.py'), readme = read('README.md'), notes = read('notes.txt') }
    H.finish('done')
  end)
end)

vim.cmd('Tether go')
