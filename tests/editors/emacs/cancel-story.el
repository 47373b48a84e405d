;;; cancel-story.el --- M-x tether-cancel during a slow run  -*- lexical-binding: t; -*-

;; Environment as story.el.  The scripted model waits before answering; the story starts
;; a run, waits for its first transcript line, cancels it and reports the outcome.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 60 nil (lambda () (message "cancel-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command (list (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       started)
  (find-file (expand-file-name "src/app.py" root))
  (tether-run "take your time")
  (while (not (with-current-buffer "*tether*" (string-match-p "▶" (buffer-string))))
    (accept-process-output nil 0.05))
  (setq started (float-time))
  (call-interactively #'tether-cancel)
  (while (not tether-last-result)
    (accept-process-output nil 0.05))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert
     (json-encode
      `((outcome . ,(plist-get tether-last-result :outcome))
        (seconds . ,(- (float-time) started))
        (transcript . ,(with-current-buffer "*tether*" (buffer-string)))))))
  (kill-emacs 0))
