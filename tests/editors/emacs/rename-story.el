;;; rename-story.el --- A two-file rename reviewed whole, denied, then allowed  -*- lexical-binding: t; -*-

;; Environment as code-story.el (TETHER_LSP, TETHER_LIB, TETHER_EGLOT_DIR, the wire
;; recorder).  src/app.py and src/lib.py are visited, Eglot running basedpyright on them.
;; The scripted model asks for the same rename twice in one run.  The first approval is
;; looked at (its buffer's text, mode and header, the keys there, the file headers `N'
;; goes through) and denied with `q'; before the second, the buffers and the disk are
;; noted (the denied rename must have landed nowhere); the second is allowed with `a'.
;; With TETHER_CHAT the run is sent from `*tether-chat*', where each approval waits inline,
;; and `v' there opens it in `*tether-approval*'.  Every wait is bounded and the report says
;; what was seen.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(add-to-list 'load-path (getenv "TETHER_EGLOT_DIR"))
(require 'eglot)
(require 'python)
(require 'tether)
(require 'tether-chat)

(run-with-timer 100 nil (lambda () (message "rename-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE")))

(defvar rename-report nil "What the story saw, as an alist.")

(defun rename-note (key value)
  "Add KEY = VALUE to the report."
  (push (cons key value) rename-report))

(defun rename-wait (condition seconds)
  "Wait up to SECONDS for CONDITION; its value."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall condition)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall condition)))

(defun rename-approval ()
  "The approval buffer while it shows the rename, else nil."
  (let ((buffer (get-buffer "*tether-approval*")))
    (and buffer (with-current-buffer buffer (string-match-p "salute" (buffer-string)))
         buffer)))

(defun rename-text (buffer)
  "BUFFER's text without properties."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun rename-disk (file)
  "FILE's text on disk."
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

(defun rename-look (buffer)
  "What the approval BUFFER shows: text, mode, header, keys, files `N' visits."
  (with-current-buffer buffer
    (let ((headers nil))
      (goto-char (point-min))
      (dotimes (_ 3)
        (ignore-errors (call-interactively (key-binding "N")))
        (push (buffer-substring-no-properties (line-beginning-position) (line-end-position))
              headers))
      (forward-line 3)  ; in the last file's hunk: the file RET would go to
      (setq headers (cons (let ((found (ignore-errors (diff-find-file-name nil t))))
                            (if found (expand-file-name found) ""))
                          headers))
      (goto-char (point-min))
      `((text . ,(rename-text buffer))
        (mode . ,(symbol-name major-mode))
        (readOnly . ,(if buffer-read-only t :json-false))
        (header . ,header-line-format)  ; a string (format-mode-line gives "" in batch)
        (selected . ,(if (eq (window-buffer (selected-window)) buffer) t :json-false))
        (keys . ,(vconcat (mapcar (lambda (key) (format "%s" (key-binding key)))
                                  '("a" "A" "d" "q" "n" "p" "N" "P"))))
        (source . ,(car headers))
        (fileHeaders . ,(vconcat (reverse (cdr headers))))))))

(defun rename-shown ()
  "The approval buffer once it shows the rename (nil when the run ended first).
With TETHER_CHAT the approval waits in the chat: `v' there opens it for review."
  (if (not (getenv "TETHER_CHAT"))
      (progn (rename-wait (lambda () (or (rename-approval) tether-last-result)) 40)
             (rename-approval))
    (rename-wait (lambda () (or (car tether--approvals) tether-last-result)) 40)
    (when (car tether--approvals)
      (with-current-buffer "*tether-chat*"
        (unless (assq 'chatWaiting rename-report)
          (rename-note 'chatWaiting (rename-text (current-buffer))))
        (tether-chat-goto-approval)
        (rename-note 'chatKeys (format "%s" (key-binding "v")))
        (call-interactively (key-binding "v"))))
    (rename-approval)))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root)
       (app-file (expand-file-name "src/app.py" root))
       (lib-file (expand-file-name "src/lib.py" root))
       app lib)
  (condition-case err
      (progn
        (with-temp-file lib-file (insert (getenv "TETHER_LIB")))
        (setq lib (find-file-noselect lib-file))
        (setq app (find-file app-file))
        (setq eglot-server-programs `((python-mode . (,(getenv "TETHER_LSP") "--stdio"))))
        (with-current-buffer lib (python-mode))  ; the server started next manages it too
        (with-current-buffer app
          (python-mode)
          (apply #'eglot (eglot--guess-contact))
          (rename-wait (lambda () (eglot-current-server)) 40))
        (rename-note 'libManaged (if (with-current-buffer lib (eglot-current-server))
                                     t :json-false))
        ;; a buffer of that name made elsewhere: its folder is not the workspace
        (with-current-buffer (get-buffer-create "*tether-approval*")
          (setq default-directory "/"))
        (if (not (getenv "TETHER_CHAT"))
            (tether-run "rename greet")
          (tether-chat)
          (with-current-buffer "*tether-chat*"
            (goto-char (point-max))
            (insert "rename greet")
            (tether-chat-send)))
        ;; 1. The rename is shown whole; it is looked at, then denied with `q'.
        (let ((shown (rename-shown)))
          (rename-note 'first (if shown (rename-look shown) :json-false))
          (when shown
            (with-current-buffer shown (call-interactively (key-binding "q")))))
        ;; 2. Asked again: nothing changed meanwhile; allowed with `a'.
        (let ((shown (rename-shown)))
          (rename-note 'second (if shown (rename-look shown) :json-false))
          (rename-note 'between
                       `((app . ,(rename-text app)) (lib . ,(rename-text lib))
                         (appDisk . ,(rename-disk app-file)) (libDisk . ,(rename-disk lib-file))))
          (when shown
            (with-current-buffer shown (call-interactively (key-binding "a")))))
        (rename-wait (lambda () tether-last-result) 20)
        (rename-wait (lambda () (not (or (buffer-modified-p app) (buffer-modified-p lib)))) 10)
        (rename-note 'after
                     `((app . ,(rename-text app)) (lib . ,(rename-text lib))
                       (appDisk . ,(rename-disk app-file)) (libDisk . ,(rename-disk lib-file))
                       (modified . ,(if (or (buffer-modified-p app) (buffer-modified-p lib))
                                        t :json-false))
                       (approvalBuffer . ,(if (rename-approval) t :json-false))
                       (pending . ,(vconcat (tether-pending-approvals)))
                       (chat . ,(if (get-buffer "*tether-chat*")
                                    (rename-text (get-buffer "*tether-chat*"))
                                  :json-false)))))
    (error (rename-note 'error (error-message-string err))))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert (json-encode
             (append rename-report
                     `((outcome . ,(plist-get tether-last-result :outcome)))))))
  (kill-emacs 0))
