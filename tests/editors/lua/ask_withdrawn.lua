-- ask_user withdrawn in Neovim: the model asks, Neovim's own picker (the default
-- vim.ui.select: inputlist()) waits on the terminal, and the run times out meanwhile. The
-- server withdraws the question ($/cancelRequest): the picker closes by itself.
local H = dofile(vim.env.HARNESS)
H.setup({ settings = { timeoutSeconds = 3 } })
local builtin = dofile(vim.api.nvim_get_runtime_file('lua/vim/ui.lua', false)[1])
local closed, finished = false, false
H.keep_notes()

local function maybe_finish()
  if closed and finished then
    H.finish('done')
  end
end

vim.ui.select = function(items, opts, on_choice)
  table.insert(H.result.selects, { prompt = opts.prompt, items = items })
  builtin.select(items, opts, function(choice, index)
    closed = true
    H.result.choice = choice or vim.NIL
    on_choice(choice, index)
    H.later(maybe_finish)
  end)
end

H.on('TetherRunFinished', function(data)
  H.result.run = H.capture(data)
  finished = true
  H.later(maybe_finish)
end)
vim.cmd('Tether pick for me')
