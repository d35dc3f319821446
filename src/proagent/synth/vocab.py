"""Vocabulary of the synthetic generator: applications, window titles, screen
texts, LLM products and user queries per intention, in English and Chinese.

Titles are templates with one ``{}`` filled from the app's subjects.
"""

from __future__ import annotations

__all__ = ["APPS", "LLM_APPS", "QUERIES", "RESPONSES"]

APPS: list[tuple[str, float, list[str], list[str]]] = [
    # (app_name, weight, title templates, subjects)
    (
        "Visual Studio Code",
        14,
        ["{} - proagent - Visual Studio Code", "{} - 毕设代码 - Visual Studio Code"],
        ["main.py", "train.py", "lifetrace.py", "utils.ts", "README.md", "数据处理.py", "config.yaml"],
    ),
    (
        "Google Chrome",
        18,
        ["{} - Google Chrome"],
        [
            "Stack Overflow - Where developers learn",
            "GitHub - FreeU-group/LifeTrace",
            "哔哩哔哩 (゜-゜)つロ 干杯~-bilibili",
            "arXiv.org e-Print archive",
            "知乎 - 有问题，就会有答案",
            "Google 学术搜索",
            "YouTube",
            "百度一下，你就知道",
        ],
    ),
    ("微信", 10, ["{}"], ["微信", "文件传输助手", "项目讨论群", "家人群"]),
    (
        "Microsoft Word",
        6,
        ["{} - Word"],
        ["毕业论文_v3.docx", "Weekly report.docx", "实验报告.docx", "Proposal draft.docx"],
    ),
    ("飞书", 5, ["飞书 - {}"], ["项目周报", "日程", "云文档：需求评审", "消息"]),
    ("Windows PowerShell", 4, ["{}"], ["Windows PowerShell", "管理员: Windows PowerShell"]),
    ("Microsoft Excel", 4, ["{} - Excel"], ["实验结果.xlsx", "budget_2025.xlsx", "问卷统计.xlsx"]),
    (
        "Microsoft Edge",
        6,
        ["{} - Microsoft Edge"],
        ["CSDN - 专业开发者社区", "Outlook", "新标签页", "淘宝网 - 淘！我喜欢"],
    ),
    ("Zotero", 2, ["{} - Zotero"], ["我的文库", "Proactive agents"]),
    ("QQ音乐", 2, ["{}"], ["QQ音乐 - 千万正版音乐海量无损曲库"]),
    ("Explorer", 4, ["{}"], ["下载", "Documents", "此电脑"]),
    ("PyCharm", 4, ["{} – PyCharm"], ["proagent – models.py", "爬虫项目 – spider.py"]),
]
"""Non-LLM applications: name, relative weight, title templates, subjects."""

LLM_APPS: list[tuple[str, str, str, float]] = [
    # (app_name, window title, platform, weight)
    ("Google Chrome", "ChatGPT - Google Chrome", "ChatGPT", 30),
    ("豆包", "豆包 - 字节跳动旗下 AI 智能助手", "豆包", 20),
    ("Microsoft Edge", "Kimi.ai - 帮你看更大的世界 - Microsoft Edge", "Kimi", 12),
    ("Google Chrome", "DeepSeek - 探索未至之境 - Google Chrome", "DeepSeek", 22),
    ("Claude", "Claude", "Claude", 6),
    ("Google Chrome", "通义千问 - Google Chrome", "通义千问", 10),
]
"""LLM products: app, window title, platform name, relative weight."""

QUERIES: dict[str, list[str]] = {
    "Information Retrieval": [
        "Find recent papers on proactive agents",
        "帮我查一下 2025 年 CVPR 的截稿时间",
        "What are the best Python libraries for SQLite?",
        "查一下北京明天的天气",
    ],
    "Knowledge Q&A": [
        "What is the difference between precision and recall?",
        "为什么 Transformer 需要位置编码？",
        "How does HTTP keep-alive work?",
        "什么是幂律分布？",
    ],
    "Data Analysis": [
        "Analyse this table and tell me which model is best",
        "帮我分析一下这组实验数据的趋势",
        "Compute the correlation between these two columns",
    ],
    "Code Programming": [
        "Write a Python function that finds screenshots by file name",
        "用 pandas 读取 Excel 并按列分组求和",
        "Write a bash script to rename files by date",
    ],
    "Debugging & Error Resolution": [
        "sqlite3.OperationalError: database is locked 怎么解决？",
        "TypeError: 'NoneType' object is not subscriptable - how to fix?",
        "npm install 报错 ERESOLVE unable to resolve dependency tree",
    ],
    "Content Generation": ["Write a short email inviting the team to Friday's demo", "帮我写一段项目周报的开头"],
    "Writing Polish & Editing": ["帮我润色一下这段论文摘要，使其更学术", "Make this paragraph more concise"],
    "Translation": [
        "帮我把这段话翻译成英文：本文提出了一种主动式智能体评测方法",
        "Translate this abstract into Chinese",
    ],
    "Summarization": ["Summarize this README in three bullet points", "总结一下这篇文章的主要观点"],
    "Document Understanding": ["这份合同第三条是什么意思？", "Explain section 4 of this paper"],
    "Learning & Tutoring": ["Teach me how gradient descent works step by step", "怎么系统地学习操作系统？"],
    "Math & Calculation": ["求解 x^2 - 5x + 6 = 0", "What is 17% of 2350?"],
    "Planning & Scheduling": ["明天下午的组会应该怎么安排时间？", "Plan a 3-day study schedule for my exam"],
    "Design & Image Generation": ["画一张科技感的海报：主动式智能体", "Suggest a colour palette for a dashboard"],
    "Recommendation & Decision Support": [
        "Which laptop should I buy for deep learning under 10000 RMB?",
        "推荐几本关于推荐系统的书",
    ],
    "Uncategorized": ["你好", "Hi, are you there?"],
}
"""User queries per intention category (taxonomy names)."""

RESPONSES = [
    "好的，下面是详细的解答。",
    "Sure, here is a step-by-step answer.",
    "以下是几个可能的原因和解决办法：",
    "Here are a few options to consider:",
]
"""First sentences of LLM replies."""
