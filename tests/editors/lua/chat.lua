-- :TetherChat used with keys: a message typed below `## You` and sent with <CR> (Normal
-- mode), the answer streaming, an edit approved from the inline view in the file while the
-- chat notes it, a follow-up sent with <C-s> (Insert mode) in the same session, then
-- :TetherChat! and a message there (a new session).
-- Env: OPEN (the file shown beside the chat), SETTINGS (JSON merged into the settings).
local H = dofile(vim.env.HARNESS)
local env = vim.env
H.setup({ settings = vim.json.decode(env.SETTINGS or '{}') })
local path = env.WORKSPACE .. '/' .. (env.OPEN or 'src/app.py')
vim.cmd.edit(path)
local file_buf = vim.api.nvim_get_current_buf()
local chat_mod = require('tether.chat')

-- the chat's last line after each text-delta: the answer grows as it arrives
H.result.streamed = {}
local on_event = chat_mod.on_event
chat_mod.on_event = function(run, event)
  on_event(run, event)
  if event.kind == 'text-delta' and run.chat then
    local lines = H.lines(run.chat.buf)
    table.insert(H.result.streamed, lines[#lines])
  end
end

local runs = {}
H.result.runs = runs
H.result.shown = {}

H.input(':TetherChat<CR>')
H.when(function()
  return chat_mod.current() ~= nil and vim.api.nvim_get_current_buf() == chat_mod.current().buf
end, function()
  local chat = chat_mod.current()
  H.result.opened = {
    name = vim.api.nvim_buf_get_name(chat.buf),
    filetype = vim.bo[chat.buf].filetype,
    lines = H.lines(chat.buf),
    cursor = vim.api.nvim_win_get_cursor(0),
    file_visible = vim.fn.bufwinid(file_buf) ~= -1,
  }
  H.input('iwhat does app.py do?<Esc><CR>')
end)

H.on('TetherApprove', function(data)
  local chat = chat_mod.current()
  table.insert(H.result.shown, {
    view = data.view.kind,
    in_file = data.view.buf == file_buf,
    chat = H.lines(chat.buf),
    chat_modifiable = vim.bo[chat.buf].modifiable,
    current_is_chat = vim.api.nvim_get_current_buf() == chat.buf,
  })
  H.later(function() -- the user goes to the approval and allows it
    H.input(vim.keycode('<leader>ta'))
    H.when(function()
      return vim.api.nvim_win_get_config(0).relative ~= ''
    end, function()
      H.input('a')
    end)
  end)
end)

--- The fold of each call line of the chat, as its window shows it.
local function folds(buf)
  local win = vim.fn.bufwinid(buf)
  return vim.api.nvim_win_call(win, function()
    local found = {}
    for lnum = 1, vim.api.nvim_buf_line_count(buf) do
      if chat_mod.is_call_line(vim.fn.getline(lnum)) then
        table.insert(found, {
          line = lnum,
          closed = vim.fn.foldclosed(lnum),
          closed_end = vim.fn.foldclosedend(lnum),
          text = vim.fn.foldtextresult(lnum),
        })
      end
    end
    return found
  end)
end

H.on('TetherRunFinished', function(data)
  local run = H.capture(data)
  table.insert(runs, run)
  H.later(function()
    local chat = chat_mod.current()
    run.chat = H.lines(chat.buf)
    run.chat_name = vim.api.nvim_buf_get_name(chat.buf)
    run.modifiable = vim.bo[chat.buf].modifiable
    run.current_is_chat = vim.api.nvim_get_current_buf() == chat.buf
    run.cursor = vim.api.nvim_win_get_cursor(0)
    run.folds = folds(chat.buf)
    if #runs == 1 then
      H.result.file_after = H.lines(file_buf)
      H.input('iand what was it called?<C-s>')
    elseif #runs == 2 then
      H.input(':TetherChat!<CR>')
      H.when(function()
        return vim.api.nvim_buf_get_name(0):find('chat%-2$') ~= nil
      end, function()
        H.input('Ia new topic<C-s>')
      end)
    else
      H.result.chats = vim.tbl_map(
        function(buf)
          return vim.api.nvim_buf_get_name(buf)
        end,
        vim.tbl_filter(function(buf)
          return vim.api.nvim_buf_get_name(buf):find('^tether://chat') ~= nil
        end, vim.api.nvim_list_bufs())
      )
      H.finish('done')
    end
  end, 30)
end)
