;;; chat-story.el --- M-x tether-chat in `emacs --batch' with no markdown-mode  -*- lexical-binding: t; -*-

;; Environment as story.el.  The user sends "hi" from the chat; the report says which
;; mode the chat is in and what it shows once the run ends.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether-chat)

(run-with-timer 60 nil (lambda () (kill-emacs 3)))

(setq tether-server-command (list (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(let ((default-directory (file-name-as-directory (getenv "TETHER_ROOT"))))
  (tether-chat)
  (with-current-buffer "*tether-chat*"
    (goto-char (point-max))
    (insert "hi")
    (tether-chat-send)
    (while (not tether-last-result) (accept-process-output nil 0.05))
    (let ((report (json-encode
                   `((markdown . ,(if (featurep 'markdown-mode) t :json-false))
                     (mode . ,(symbol-name major-mode))
                     (textMode . ,(if (derived-mode-p 'text-mode) t :json-false))
                     (chat . ,(buffer-substring-no-properties (point-min) (point-max)))))))
      (with-temp-file (getenv "TETHER_RESULT") (insert report))))
  (kill-emacs 0))
